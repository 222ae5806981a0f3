"""kubeloop.cli."""
