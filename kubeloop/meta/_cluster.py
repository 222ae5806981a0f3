"""The name of the cluster a single-cluster program runs on.

Every cache key carries its cluster (multi-cluster is not a bolt-on), so single-cluster code
needs a name too; the client, caches, controllers and the manager all default to this one.
"""

from __future__ import annotations

from typing import Final

__all__ = ["DEFAULT_CLUSTER"]

DEFAULT_CLUSTER: Final = "default"
"""The cluster name used when a program runs on a single cluster."""
