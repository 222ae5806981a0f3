"""networking scenarios."""

from __future__ import annotations
