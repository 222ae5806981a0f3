"""resourceVersion comparison: the one place that decides when two versions can be ordered.

Kubernetes says resourceVersions are opaque; in practice every server (etcd-backed or the
emulator) hands out canonical decimal integers that increase with each write, and
controller-runtime, client-go's reflector and kube-rs all rely on that for staleness checks.
So: a canonical decimal (no sign, no leading zero) is ordered numerically; anything else is
never "newer" than anything, only equal to itself. Callers that meet an opaque version
therefore fall back to the safe choice (wait, re-read) instead of guessing.
"""

from __future__ import annotations

__all__ = ["rv_at_least", "rv_int", "rv_newer"]


def rv_int(rv: str | None) -> int | None:
    """A resourceVersion as an int, or None if it is missing or not a canonical decimal."""
    if rv and rv.isascii() and rv.isdigit() and (rv[0] != "0" or rv == "0"):
        return int(rv)
    return None


def rv_newer(a: str | None, b: str | None) -> bool:
    """True if resourceVersion ``a`` is known to be newer than ``b`` (``b`` None: absent)."""
    ia = rv_int(a)
    if ia is None:
        return False
    if b is None:
        return True
    ib = rv_int(b)
    return ib is not None and ia > ib


def rv_at_least(a: str | None, b: str | None) -> bool:
    """True if resourceVersion ``a`` is known to be the same as or newer than ``b``."""
    if a is not None and a == b:
        return True
    ia, ib = rv_int(a), rv_int(b)
    return ia is not None and ib is not None and ia >= ib
