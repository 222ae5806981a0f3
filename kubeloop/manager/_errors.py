"""The Manager's own error: it could not start, or a part of it failed."""

from __future__ import annotations

__all__ = ["ManagerError"]


class ManagerError(RuntimeError):
    """The manager could not start or a component failed; ``str()`` is one readable line."""
