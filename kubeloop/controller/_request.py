"""What a reconcile is asked to do (`Request`) and what it answers (`Result`, `TerminalError`).

A request names one object and nothing else: reconciles are level-triggered, so they read the
current state from the cache instead of being handed an event. Requests are the work queue's keys:
equal requests collapse into one queue slot.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from kubeloop.meta import DEFAULT_CLUSTER, name_of, namespace_of


class Request(NamedTuple):
    """One object to reconcile: (cluster, namespace, name). Namespace is "" for cluster-scoped kinds.

    A named tuple: hashing and comparing it (the queue does both for every change) runs in C.
    """

    cluster: str
    namespace: str
    name: str

    @classmethod
    def of(cls, obj: Mapping[str, Any], cluster: str = DEFAULT_CLUSTER) -> Request:
        """The request for an object (its metadata.namespace and metadata.name)."""
        return cls(cluster, namespace_of(obj) or "", name_of(obj) or "")

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.cluster}:{where}"


@dataclass(frozen=True, slots=True)
class Result:
    """What a reconcile asks for next.

    - ``Result()``: done; reconcile again only when something changes.
    - ``Result(requeue_after=30)``: reconcile again in 30 s (also resets the error backoff;
      not rate limited). An event that arrives earlier still triggers a reconcile at once.
      ``requeue_after=0`` means "again now" (a computed delay that reached zero, as in a
      CronJob-style schedule), deliberately unlike controller-runtime, where a zero
      ``RequeueAfter`` is the same as unset and silently drops the requeue.
    - ``Result(requeue=True)``: reconcile again after the key's backoff delay (rate limited),
      without counting an error: "not done yet, poll with backoff". Kept although
      controller-runtime deprecated ``Requeue``; ``requeue_after`` wins when both are set (see
      docs/controllers.md).
    """

    requeue_after: float | None = None
    requeue: bool = False

    def __post_init__(self) -> None:
        if self.requeue_after is not None and self.requeue_after < 0:
            raise ValueError("requeue_after must be >= 0 seconds")


class TerminalError(Exception):
    """Raised by a reconcile that must not be retried (bad input that only a change can fix).

    It is logged and counted (``controller_runtime_terminal_reconcile_errors_total``) but the
    request is not requeued; the next change to the object triggers a reconcile as usual.
    """
