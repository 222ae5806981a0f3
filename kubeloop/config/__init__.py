"""kubeloop.config."""
