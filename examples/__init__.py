"""Example controllers built on kubeloop; each directory holds one, with its test beside it."""
