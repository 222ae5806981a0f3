"""kubeloop: an asyncio Kubernetes controller runtime."""

from kubeloop.client import Client
from kubeloop.controller import Context, Controller, Request, Result, TerminalError
from kubeloop.manager import LeaderElection, Manager, Sharding

__version__ = "0.1.0"

__all__ = [
    "Client",
    "Context",
    "Controller",
    "LeaderElection",
    "Manager",
    "Request",
    "Result",
    "Sharding",
    "TerminalError",
    "__version__",
]
