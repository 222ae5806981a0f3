"""The operators each framework runs as its own subprocess (kubeloop, kopf, a bare loop)."""
