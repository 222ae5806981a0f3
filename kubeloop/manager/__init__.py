"""kubeloop.manager."""
