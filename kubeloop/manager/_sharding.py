"""Sharding reconciles across replicas: the configuration and the fencing protocol, with no I/O.

Each replica holds a membership Lease (``<name>-shard-<hash of identity>``, labelled
``kubeloop.dev/shard=<name>``) and records in it, in the ``kubeloop.dev/shard-view`` annotation,
the membership view it has *adopted*. The async shell (`_membership.py`) renews that Lease and
lists its peers' every ``retry_period``; what it may do comes from `ShardProtocol`:

- the live view: the members whose Leases are valid by *our* monotonic clock (`Observer`, as
  leader election judges expiry), ourselves included while our own `Tenure` lasts;
- a key belongs to ``owner(key, view)`` (`_rendezvous.py`);
- we *claim* the keys we own under our adopted view. We adopt a new live view only when no
  reconcile of a key we would lose under it is in flight (and we stopped starting those keys as
  soon as the live view changed);
- we start a key only if our tenure is valid, we own it under both our adopted and our live view,
  the list we judge by was taken *after* the write that recorded our adoption, and no valid peer
  claims it under the view *it* adopted;
- after each renewal, `gains` says which keys to queue again: those the gate admits now and did not
  at the last call (the keys this replica *gained*), and those it refused meanwhile although they
  were ours (their events were dropped during an adoption, or while our tenure had lapsed). A key
  that stays ours through a membership change is not reconciled again: the 2-3 steps of one
  change (live view, adoption, the peers' adoptions) each admit only what they add.

Why that is enough (docs/sharding.md has the long form): both rivals for a key wrote their claim
before the list they judge by, and the API server orders the writes and lists, so whichever
listed second sees the other's claim and waits. A claim disappears only when its holder re-adopts
after its reconciles of the key finished, or when its Lease expires by the observer's clock,
which happens after the holder's tenure (``renew_deadline`` from the write it *sent*) ran out.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kubeloop.manager._lease import (
    LeaseRecord,
    LeaseTimings,
    Observer,
    Tenure,
)
from kubeloop.manager._rendezvous import View, owner, view_of

__all__ = ["MEMBER_LABEL", "VIEW_ANNOTATION", "MemberLease", "ShardProtocol", "Sharding", "ShardingMode",
           "key_of", "lease_name"]

MEMBER_LABEL = "kubeloop.dev/shard"
"""Label on every membership Lease: its value is the sharding name (members list each other by it)."""

VIEW_ANNOTATION = "kubeloop.dev/shard-view"
"""Annotation on a membership Lease: the view its holder adopted (a JSON list of identities)."""

ShardingMode = Literal["sharded", "broadcast"]

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@dataclass(frozen=True)
class Sharding(LeaseTimings):
    """Spread a manager's controllers over replicas (``Manager(sharding=Sharding("widgets"))``).

    - ``name``: shared by the replicas of one operator; names the membership Leases and labels them.
    - ``namespace``: where the Leases live (None: the client's default namespace).
    - ``identity``, ``lease_duration``, ``renew_deadline``, ``retry_period`` (`LeaseTimings`,
      keyword-only, as for leader election): a dead replica's keys move after ``lease_duration``; a
      replica that could not renew for ``renew_deadline`` starts nothing until it renews.
    - ``mode``: ``"sharded"``, each change handled once, by the replica owning the key;
      ``"broadcast"``, every replica reconciles every key (membership is still kept, for the map).
    """

    name: str
    namespace: str | None = None
    mode: ShardingMode = "sharded"

    def __post_init__(self) -> None:
        if not self.name or len(self.name) > 63 or not _NAME.match(self.name):
            raise ValueError(f"sharding name {self.name!r} must be a DNS label: at most 63 lowercase "
                             "letters, digits and '-', starting and ending with a letter or digit")
        if self.mode not in ("sharded", "broadcast"):
            raise ValueError(f"sharding mode must be 'sharded' or 'broadcast', not {self.mode!r}")
        super().__post_init__()


def lease_name(name: str, identity: str) -> str:
    """The membership Lease of ``identity`` (identities need not be valid object names: hashed)."""
    return f"{name}-shard-{hashlib.blake2b(identity.encode(), digest_size=5).hexdigest()}"


def key_of(cluster: str, namespace: str, name: str) -> str:
    """The string a request is hashed by: the same key on every replica and for every controller."""
    return f"{cluster}/{namespace}/{name}"


@dataclass(frozen=True)
class MemberLease:
    """One membership Lease as the protocol reads it."""

    name: str
    record: LeaseRecord
    adopted: View

    @classmethod
    def from_lease(cls, lease: Mapping[str, Any]) -> MemberLease:
        meta = lease.get("metadata") or {}
        raw = (meta.get("annotations") or {}).get(VIEW_ANNOTATION) or "[]"
        try:
            members = json.loads(raw)
        except ValueError:
            members = []
        adopted = view_of(m for m in members if isinstance(m, str)) if isinstance(members, list) else ()
        return cls(str(meta.get("name") or ""), LeaseRecord.from_lease(lease), adopted)

    @property
    def holder(self) -> str:
        return self.record.holder


def view_annotation(view: View) -> str:
    return json.dumps(list(view), separators=(",", ":"))


class ShardProtocol:
    """One replica's side of the protocol (module docstring): what it may start, when it may adopt.

    Fed by the shell: `wrote` after each successful write of our Lease, `write_failed` after a
    failed one, `listed` with every list of the membership Leases (taken after the write).
    """

    def __init__(self, identity: str, renew_deadline: float) -> None:
        self.identity = identity
        self.tenure = Tenure(renew_deadline)
        self.adopted: View = ()          # the view our Lease records (last successful write)
        self.confirmed: View | None = None  # adopted, and listed after it was written: what owns() uses
        self.live: View = ()             # members with valid Leases at the last list
        self.claims: dict[str, View] = {}  # valid peers -> the view each adopted
        self.refused: set[str] = set()  # keys owns() refused since the last `gains` that were ours then
        self._granted: _Grant | None = None  # what `owns` judged by at the last `gains` (None: never)
        self._observers: dict[str, Observer] = {}

    # ------------------------------------------------------------------ inputs

    def wrote(self, adopted: View, sent_at: float) -> None:
        """Our Lease, recording ``adopted``, was written by a request sent at ``sent_at``."""
        self.tenure.renewed(sent_at)
        if adopted != self.adopted:
            self.adopted = adopted
            self.confirmed = None  # until a list taken after this write

    def write_failed(self) -> None:
        """A write failed, maybe after the server applied it: trust no adoption until the next
        successful write and list (the tenure runs out on its own)."""
        self.confirmed = None

    def listed(self, leases: Iterable[MemberLease], now: float, *, confirms: bool = True) -> list[MemberLease]:
        """A list of the membership Leases; ``confirms``: it was started after our last write and
        that write succeeded (only then may `owns` act on our adoption). Returns the peers' Leases
        now expired by our clock (the shell may delete them)."""
        expired: list[MemberLease] = []
        seen: set[str] = set()
        claims: dict[str, View] = {}
        for lease in leases:
            seen.add(lease.name)
            if lease.holder == self.identity or not lease.holder:
                continue
            obs = self._observers.setdefault(lease.name, Observer())
            obs.observe(lease.record, now)
            if obs.expires_in(now) > 0:
                claims[lease.holder] = lease.adopted
            else:
                expired.append(lease)
        for name in set(self._observers) - seen:
            del self._observers[name]
        self.claims = claims
        mine = [self.identity] if self.tenure.valid(now) else []
        self.live = view_of([*claims, *mine])
        if confirms:
            self.confirmed = self.adopted
        return expired

    # ------------------------------------------------------------------ decisions

    def owns(self, key: str, now: float) -> bool:
        """May this replica start a reconcile of ``key`` now? A key refused although it was ours at
        the last `gains` (an adoption under way, a lapsed tenure) is remembered for the next one."""
        grant = _Grant(self.confirmed, self.live, self.claims)
        if grant.admits(key, self.identity):
            if self.tenure.valid(now):
                return True
            self.refused.add(key)
            return False
        last = self._granted
        if last is None or (last != grant and last.admits(key, self.identity)):
            self.refused.add(key)
        return False

    def gains(self, now: float) -> Callable[[str], bool] | None:
        """Which keys to queue again (see the module docstring), as a test on a key; None when
        there are none (the ownership is unchanged and nothing of ours was refused, or nothing can
        be admitted now: the refusals are kept for the next call)."""
        if self.confirmed is None or not self.tenure.valid(now):
            return None
        grant, me = _Grant(self.confirmed, self.live, self.claims), self.identity
        last, refused = self._granted, self.refused
        self._granted, self.refused = grant, set()
        if last == grant:
            if not refused:
                return None
            return lambda key: key in refused and grant.admits(key, me)
        return lambda key: grant.admits(key, me) and (key in refused or last is None or not last.admits(key, me))

    def adoption(self, in_flight: Iterable[str]) -> View | None:
        """The live view, if it differs from the adopted one and may be adopted now: none of the
        keys in flight here would be lost under it. None: nothing to adopt (yet)."""
        live, me = self.live, self.identity
        if live == self.adopted:
            return None
        if any(owner(key, live) != me for key in in_flight):
            return None
        return live


@dataclass(frozen=True)
class _Grant:
    """What `ShardProtocol.owns` judges a key by, tenure aside: the confirmed adoption, the live
    view and the peers' claims."""

    confirmed: View | None
    live: View
    claims: Mapping[str, View]

    def admits(self, key: str, me: str) -> bool:
        view = self.confirmed
        if view is None or owner(key, view) != me or owner(key, self.live) != me:
            return False
        # a peer that adopted our view claims none of our keys: the steady state costs no hashing
        return not any(adopted != view and peer in adopted and owner(key, adopted) == peer
                       for peer, adopted in self.claims.items())
