"""kubeloop.controller."""
