"""kubeloop: an asyncio Kubernetes controller runtime.

The names below are imported on first use (PEP 562), not with the package: a program that only
needs ``kubeloop.cache`` or ``kubeloop.client`` (or the emulator) does not pay for the controller
runtime, the manager and their web server at start-up (measured: ~0.1 s of a ~0.35 s import).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubeloop.cache import to_builtin
    from kubeloop.client import Client
    from kubeloop.controller import Context, Controller, Request, Result, TerminalError
    from kubeloop.manager import LeaderElection, Manager, Sharding

__version__ = "0.1.0"

_LAZY = {
    "Client": "kubeloop.client",
    "Context": "kubeloop.controller",
    "Controller": "kubeloop.controller",
    "Request": "kubeloop.controller",
    "Result": "kubeloop.controller",
    "TerminalError": "kubeloop.controller",
    "LeaderElection": "kubeloop.manager",
    "Manager": "kubeloop.manager",
    "Sharding": "kubeloop.manager",
    "to_builtin": "kubeloop.cache",
}

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
    "to_builtin",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kubeloop' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
