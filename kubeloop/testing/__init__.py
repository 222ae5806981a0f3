"""kubeloop.testing."""
