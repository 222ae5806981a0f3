"""kubeloop: an asyncio Kubernetes controller runtime."""

__version__ = "0.1.0"
