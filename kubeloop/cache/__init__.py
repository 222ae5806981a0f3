"""kubeloop.cache."""
