"""kubeloop.queue."""
