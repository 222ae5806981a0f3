"""Sharding without I/O: rendezvous hashing (spread, minimal movement) and the fencing protocol
(`ShardProtocol`: who may start a key while the membership changes)."""

from __future__ import annotations

import pytest

from kubeloop.manager import Sharding
from kubeloop.manager._lease import LeaseRecord
from kubeloop.manager._rendezvous import owner, spread, view_of
from kubeloop.manager._sharding import MemberLease, ShardProtocol, key_of, lease_name, view_annotation

KEYS = [key_of("default", "ns", f"obj-{i}") for i in range(3000)]


# ---------------------------------------------------------------------- rendezvous hashing

def test_every_replica_computes_the_same_owner_whatever_the_member_order() -> None:
    members = ["c", "a", "b"]
    for key in KEYS[:200]:
        assert owner(key, members) == owner(key, list(reversed(members))) == owner(key, view_of(members))
    assert owner("k", ()) is None


def test_keys_spread_evenly() -> None:
    for n in (2, 3, 5, 10):
        view = view_of(f"replica-{i}" for i in range(n))
        counts = spread(KEYS, view)
        assert sum(counts.values()) == len(KEYS)
        fair = len(KEYS) / n
        assert all(0.8 * fair < c < 1.2 * fair for c in counts.values()), counts


def test_a_member_leaving_moves_only_its_keys() -> None:
    before = view_of(["a", "b", "c", "d"])
    after = view_of(["a", "b", "d"])
    moved = [k for k in KEYS if owner(k, before) != owner(k, after)]
    assert moved and all(owner(k, before) == "c" for k in moved)
    assert {owner(k, after) for k in moved} == {"a", "b", "d"}  # spread over the others


def test_a_member_joining_takes_its_share_and_only_that_moves() -> None:
    before = view_of(["a", "b", "c"])
    after = view_of(["a", "b", "c", "d"])
    moved = [k for k in KEYS if owner(k, before) != owner(k, after)]
    assert all(owner(k, after) == "d" for k in moved)
    assert 0.2 * len(KEYS) < len(moved) < 0.3 * len(KEYS)


# ---------------------------------------------------------------------- configuration

def test_sharding_configuration_is_checked_where_it_is_built() -> None:
    s = Sharding("widgets", lease_duration=3, renew_deadline=2, retry_period=0.5)
    assert s.identity and s.mode == "sharded" and s.lease_duration_seconds == 3
    with pytest.raises(ValueError, match="DNS label"):
        Sharding("Widgets_1")
    with pytest.raises(ValueError, match="mode"):
        Sharding("w", mode="everyone")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="greater than renew_deadline"):
        Sharding("w", lease_duration=2, renew_deadline=2)
    assert lease_name("w", "host_1234") == lease_name("w", "host_1234") != lease_name("w", "host_5678")


# ---------------------------------------------------------------------- the protocol

def lease(holder: str, adopted: tuple[str, ...], renewed: str = "t0") -> MemberLease:
    return MemberLease(lease_name("w", holder), LeaseRecord(holder, 3, "t0", renewed, 0), adopted)


def lease_dict(holder: str, adopted: tuple[str, ...]) -> dict[str, object]:
    return {"metadata": {"name": lease_name("w", holder), "annotations": {"kubeloop.dev/shard-view":
                                                                           view_annotation(adopted)}},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": 3, "renewTime": "t"}}


def test_a_lease_round_trips_its_adopted_view() -> None:
    got = MemberLease.from_lease(lease_dict("a", ("a", "b")))
    assert got.adopted == ("a", "b") and got.holder == "a"
    bad = lease_dict("a", ())
    bad["metadata"]["annotations"]["kubeloop.dev/shard-view"] = "{not json"  # type: ignore[index]
    assert MemberLease.from_lease(bad).adopted == ()


def joined(me: str, peers: list[MemberLease], now: float = 0.0) -> ShardProtocol:
    """A member that wrote, listed, adopted the live view, wrote and listed again."""
    p = ShardProtocol(me, renew_deadline=2.0)
    p.wrote((), now)
    p.listed(peers, now)
    view = p.adoption([])
    assert view is not None
    p.wrote(view, now)
    p.listed(peers, now)
    return p


def test_alone_a_member_owns_every_key_once_its_adoption_is_confirmed() -> None:
    p = ShardProtocol("a", renew_deadline=2.0)
    assert not p.owns(KEYS[0], 0.0)  # nothing written yet
    p.wrote((), 0.0)
    p.listed([], 0.0)
    assert p.live == ("a",) and not p.owns(KEYS[0], 0.0)  # adopted nothing yet
    p.wrote(("a",), 0.1)
    assert not p.owns(KEYS[0], 0.1)  # written, but no list since: not confirmed
    p.listed([], 0.2)
    assert all(p.owns(k, 0.3) for k in KEYS[:100])


def test_no_key_is_started_once_the_tenure_ran_out() -> None:
    p = joined("a", [])
    p.gains(0.0)
    assert p.owns(KEYS[0], 1.9)
    assert not p.refused
    assert not p.owns(KEYS[0], 2.0)  # renew_deadline after the write was sent: fenced
    assert p.refused == {KEYS[0]}  # so the shell re-enqueues it once it renewed


def test_a_failed_write_trusts_no_adoption_until_written_and_listed_again() -> None:
    p = joined("a", [])
    p.write_failed()
    assert not p.owns(KEYS[0], 0.5)
    p.listed([], 0.5, confirms=False)
    assert not p.owns(KEYS[0], 0.5)
    p.wrote(("a",), 0.6)
    p.listed([], 0.6)
    assert p.owns(KEYS[0], 0.7)


def test_a_joining_member_waits_until_the_old_owner_gave_the_key_up() -> None:
    a = joined("a", [])
    b = joined("b", [lease("a", ("a",))])  # b adopted {a, b}; a still claims every key under {a}
    gained = [k for k in KEYS[:300] if owner(k, ("a", "b")) == "b"]
    assert gained and not any(b.owns(k, 0.5) for k in gained)
    # a sees b, stops starting b's keys at once, adopts {a, b} once none of them is in flight
    a.listed([lease("b", ("a", "b"))], 0.5)
    assert not any(a.owns(k, 0.5) for k in gained)
    assert a.adoption([gained[0]]) is None  # a reconcile of a key it loses is still running
    assert a.adoption([]) == ("a", "b")
    a.wrote(("a", "b"), 0.6)
    a.listed([lease("b", ("a", "b"))], 0.6)
    assert all(a.owns(k, 0.7) != (k in gained) for k in KEYS[:300])
    # b sees a's new claim: it starts its share now
    b.listed([lease("a", ("a", "b"), "t1")], 0.7)
    assert all(b.owns(k, 0.8) == (k in gained) for k in KEYS[:300])


def test_an_expired_peers_keys_move_and_a_valid_one_keeps_its_claim() -> None:
    b = joined("b", [lease("a", ("a", "b")), lease("c", ("a", "b", "c"))])
    b.wrote(b.adopted, 0.0)
    b.listed([lease("a", ("a", "b", "c")), lease("c", ("a", "b", "c"))], 0.0)
    b.wrote(("a", "b", "c"), 0.0)
    b.listed([lease("a", ("a", "b", "c")), lease("c", ("a", "b", "c"))], 0.0)
    # c dies: its record stops changing; a keeps renewing
    b.wrote(b.adopted, 1.5)
    expired = b.listed([lease("a", ("a", "b", "c"), "t1"), lease("c", ("a", "b", "c"))], 2.5)
    assert expired == [] and "c" in b.live  # unchanged for 2.5 s of our clock; the lease lasts 3 s
    b.wrote(b.adopted, 3.5)
    expired = b.listed([lease("a", ("a", "b", "c"), "t2"), lease("c", ("a", "b", "c"))], 3.6)
    assert [x.holder for x in expired] == ["c"] and b.live == ("a", "b")
    assert b.adoption([]) == ("a", "b")
    b.wrote(("a", "b"), 3.7)
    b.listed([lease("a", ("a", "b", "c"), "t3")], 3.7)
    c_keys = [k for k in KEYS[:300] if owner(k, ("a", "b", "c")) == "c"]
    mine_now = [k for k in c_keys if owner(k, ("a", "b")) == "b"]
    assert mine_now and all(b.owns(k, 3.8) for k in mine_now)  # c's claim died with its lease
    a_keys = [k for k in KEYS[:300] if owner(k, ("a", "b", "c")) == "a"]
    assert not any(b.owns(k, 3.8) for k in a_keys)  # a is alive and still claims them


def test_a_member_whose_tenure_lapsed_gives_its_keys_up_only_once_its_reconciles_ended() -> None:
    a = joined("a", [lease("b", ("a", "b"))])
    a.wrote(("a", "b"), 0.0)
    a.listed([lease("b", ("a", "b"))], 0.0)
    mine = [k for k in KEYS[:100] if owner(k, ("a", "b")) == "a"]
    a.listed([lease("b", ("a", "b"), "t1")], 5.0)  # stalled: tenure over, not a live member now
    assert a.live == ("b",) and not a.owns(mine[0], 5.0)
    assert a.adoption([mine[0]]) is None
    assert a.adoption([]) == ("b",)


def test_two_members_racing_for_a_key_never_both_start_it() -> None:
    """Both adopted a view in which they own k; whichever listed after the other's write waits."""
    a = joined("a", [])
    b = ShardProtocol("b", renew_deadline=2.0)
    b.wrote(("b",), 0.0)  # b believes it is alone and claims every key...
    b.listed([lease("a", ("a",))], 0.1)  # ...but its confirming list shows a's claim
    assert not any(b.owns(k, 0.2) for k in KEYS[:100])
    a.listed([lease("b", ("b",))], 0.2)  # a learns of b: b claims everything too
    assert not any(a.owns(k, 0.3) for k in KEYS[:100])


def test_a_membership_change_gains_only_the_keys_that_moved_each_once() -> None:
    """Issue 31 item 5: every step of a change (the live view, our adoption, the peers' adoptions)
    used to re-enqueue every key the replica owned; `gains` names only what it added."""
    keys = KEYS[:300]
    a = joined("a", [lease("b", ("a", "b"))])
    first = a.gains(0.0)
    assert first is not None and {k for k in keys if first(k)} == {k for k in keys if owner(k, ("a", "b")) == "a"}
    assert a.gains(0.1) is None  # nothing changed since

    # c joins: a sees it (the live view changes: it loses keys, gains none)
    a.listed([lease("b", ("a", "b"), "t1"), lease("c", ("a", "b", "c"))], 0.5)
    step = a.gains(0.5)
    assert step is None or not any(step(k) for k in keys)
    a.wrote(("a", "b", "c"), 0.6)  # its adoption, confirmed by the next list
    a.listed([lease("b", ("a", "b"), "t2"), lease("c", ("a", "b", "c"), "t1")], 0.6)
    step = a.gains(0.6)
    assert step is None or not any(step(k) for k in keys)
    a.listed([lease("b", ("a", "b", "c"), "t3"), lease("c", ("a", "b", "c"), "t2")], 0.7)  # b adopted too
    step = a.gains(0.7)
    assert step is None or not any(step(k) for k in keys)

    # c leaves: a gets some of c's keys back, once; its other keys stay where they were
    a.listed([lease("b", ("a", "b", "c"), "t4")], 0.8)  # c's Lease deleted: live view {a, b}
    a.wrote(("a", "b"), 0.9)
    a.listed([lease("b", ("a", "b", "c"), "t5")], 0.9)
    step = a.gains(0.9)
    b_adopts = [lease("b", ("a", "b"), "t6")]
    a.listed(b_adopts, 1.0)
    later = a.gains(1.0)
    gained = {k for k in keys if (step is not None and step(k)) or (later is not None and later(k))}
    back = {k for k in keys if owner(k, ("a", "b", "c")) == "c" and owner(k, ("a", "b")) == "a"}
    assert back and gained == back
    assert a.gains(1.1) is None


def test_keys_refused_during_an_adoption_are_queued_again_once() -> None:
    """A key that stayed ours but whose event the gate refused while our adoption was being written
    (nothing is admitted until a list confirms it) was dropped: it is queued again, once; a key of
    ours that was not refused is not."""
    a = joined("a", [])
    a.gains(0.0)
    a.listed([lease("b", ("a", "b"))], 0.1)  # b joined and adopted {a, b}
    a.gains(0.1)
    mine = [k for k in KEYS[:100] if owner(k, ("a", "b")) == "a"]
    a.wrote(("a", "b"), 0.2)  # being adopted: not confirmed yet
    assert not a.owns(mine[0], 0.2) and a.refused == {mine[0]}
    a.listed([lease("b", ("a", "b"), "t1")], 0.3)
    step = a.gains(0.3)
    assert step is not None and [k for k in mine if step(k)] == [mine[0]]
    assert a.gains(0.4) is None
