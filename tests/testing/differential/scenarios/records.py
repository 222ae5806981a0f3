"""records scenarios."""

from __future__ import annotations
