"""pytest fixtures for kubeloop users and kubeloop's own tests (registered as a pytest11 plugin)."""
