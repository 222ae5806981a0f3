"""The controller's own error: it could not start."""

from __future__ import annotations

__all__ = ["ControllerError"]


class ControllerError(RuntimeError):
    """A controller could not start (bad configuration, caches that never synced); ``str()`` is one line."""
