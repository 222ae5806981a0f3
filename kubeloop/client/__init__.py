"""kubeloop.client."""
