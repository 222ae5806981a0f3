"""Unit tests of the no-op apply decision: containment, fingerprints, memory."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kubeloop.cache import freeze
from kubeloop.controller._apply import Applied, AppliedMemory, can_skip, contains, fingerprint, is_full_object


def live_dep() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "n", "resourceVersion": "7", "uid": "u", "labels": {"a": "1"}},
        "spec": {"replicas": 2, "strategy": {"type": "RollingUpdate"},
                 "template": {"spec": {"containers": [
                     {"name": "app", "image": "nginx", "imagePullPolicy": "IfNotPresent"},
                     {"name": "sidecar", "image": "envoy"}]}}},
    }


def test_contains_ignores_server_defaults_and_other_managers_items() -> None:
    live = freeze(live_dep())
    assert contains(live, {"spec": {"replicas": 2}})
    assert contains(live, {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx"}]}}}})
    assert not contains(live, {"spec": {"replicas": 3}})
    assert not contains(live, {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "x"}]}}}})
    assert not contains(live, {"metadata": {"labels": {"b": "2"}}})
    assert contains(live, {"metadata": {"annotations": None}})  # None: must be absent
    assert not contains({"a": True}, {"a": 1}) and not contains({"a": 1}, {"a": True})
    assert not contains({"a": [1, 2]}, {"a": [1]}) and contains({"a": [1, 2]}, {"a": [1, 2]})


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
                    max_leaves=15))
def test_every_value_contains_itself(value: Any) -> None:
    assert contains(value, value) or (isinstance(value, dict) and any(v is None for v in value.values()))
    assert contains(freeze(value), value) or (isinstance(value, dict) and any(v is None for v in value.values()))


def test_fingerprint_is_order_independent() -> None:
    assert fingerprint({"a": 1, "b": {"c": 2, "d": 3}}) == fingerprint({"b": {"d": 3, "c": 2}, "a": 1})
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})
    assert fingerprint(freeze({"a": [1]})) == fingerprint({"a": [1]})


def test_can_skip_needs_memory_and_an_unchanged_or_matching_object() -> None:
    desired = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "n"},
               "spec": {"replicas": 2}}
    fp = fingerprint(desired)
    live = freeze(live_dep())
    assert not can_skip(live, desired, None, fp)  # after a restart: apply once
    assert not can_skip(None, desired, Applied(fp, "7", "u"), fp)  # gone
    assert can_skip(live, desired, Applied(fp, "7", "u"), fp)  # unchanged since our apply
    assert can_skip(live, desired, Applied(fp, "5", "u"), fp)  # changed by others, still matches
    assert not can_skip(live, desired, Applied(fingerprint({"x": 1}), "7", "u"), fp)  # config changed
    assert not can_skip(live, desired, Applied(fp, "5", "other-uid"), fp)  # recreated
    meta_only = freeze({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
                        "metadata": {"name": "d", "resourceVersion": "7", "uid": "u"}})
    assert not is_full_object(meta_only)
    assert can_skip(meta_only, desired, Applied(fp, "7", "u"), fp)
    meta_only_changed = freeze({"kind": "PartialObjectMetadata", "metadata": {"resourceVersion": "8", "uid": "u"}})
    assert not can_skip(meta_only_changed, desired, Applied(fp, "7", "u"), fp)  # cannot tell: ask the server


def test_an_integral_float_is_not_the_integer_the_server_stored() -> None:
    """kube-apiserver sees 1.0 where it stored 1 as a change (int64 vs float64: a new generation),
    so an apply of it is not a no-op, although 1 == 1.0 in Python."""
    live = freeze({"apiVersion": "example.com/v1", "kind": "WebApp",
                   "metadata": {"name": "w", "resourceVersion": "9", "uid": "u"},
                   "spec": {"weight": 1, "ports": [{"containerPort": 80, "name": "http"}]}})
    assert not contains(live, {"spec": {"weight": 1.0}}) and contains(live, {"spec": {"weight": 1}})
    assert not contains(live, {"spec": {"ports": [{"containerPort": 80.0}]}})  # a keyed list item too
    desired = {"apiVersion": "example.com/v1", "kind": "WebApp", "metadata": {"name": "w"}, "spec": {"weight": 1.0}}
    fp = fingerprint(desired)
    assert not can_skip(live, desired, Applied(fp, "5", "u"), fp)  # changed by others since: compare, and send


def test_applied_memory_is_a_bounded_lru() -> None:
    mem = AppliedMemory(max_entries=2)
    mem.put("a", Applied(b"1", "1", None))
    mem.put("b", Applied(b"2", "2", None))
    assert mem.get("a") is not None
    mem.put("c", Applied(b"3", "3", None))
    assert mem.get("b") is None and mem.get("a") is not None and len(mem) == 2
    mem.forget("a")
    assert mem.get("a") is None
