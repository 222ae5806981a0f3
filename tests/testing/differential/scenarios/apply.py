"""apply scenarios."""

from __future__ import annotations
