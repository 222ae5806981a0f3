"""kubeloop.watch."""
