"""Errors raised by the work queue."""

from __future__ import annotations


class QueueShutDown(Exception):
    """Raised by ``get()`` once the queue has been shut down: the worker should exit."""
