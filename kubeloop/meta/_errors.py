"""Errors of the object vocabulary: one exception type for every bad selector.

A `ValueError` so callers that validate user input catch it with the usual type; the
emulator answers it as 400 BadRequest with the message unchanged (the server's text).
"""

from __future__ import annotations

__all__ = ["SelectorError"]


class SelectorError(ValueError):
    """A selector that cannot be parsed or is invalid (the server answers 400 BadRequest)."""
