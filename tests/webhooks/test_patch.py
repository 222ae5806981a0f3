"""The JSON patch a mutating webhook sends: correct for any pair of JSON documents (checked with the
emulator's RFC 6902 implementation, an independent one), small for the usual changes, and rebased
onto the object as received when the handler saw a typed reading of it."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.testing.apiserver.patch import json_patch
from kubeloop.webhooks import diff, rebase

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2, 2, allow_nan=False),
                    st.sampled_from(["", "a", "b/c", "~0", "x~1y"]))
keys = st.sampled_from(["a", "b", "c/d", "e~f", "labels", ""])
documents = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                          st.dictionaries(keys, inner, max_size=4)), max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(old=documents, new=documents)
def test_the_patch_turns_old_into_new(old: Any, new: Any) -> None:
    patched = json_patch(old, diff(old, new))
    assert patched == new and _types(patched) == _types(new)


def _types(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return type(value).__name__
    return "number"  # JSON has one number type: 3 and 3.0 are the same value


def test_usual_changes_are_small_patches() -> None:
    obj = {"metadata": {"name": "w", "labels": {"a": "1"}}, "spec": {"containers": [{"name": "c"}]}}
    labelled = {"metadata": {"name": "w", "labels": {"a": "1", "example.com/managed": "true"}},
                "spec": {"containers": [{"name": "c"}]}}
    assert diff(obj, labelled) == [{"op": "add", "path": "/metadata/labels/example.com~1managed", "value": "true"}]
    appended = {**obj, "spec": {"containers": [{"name": "c"}, {"name": "sidecar"}]}}
    assert diff(obj, appended) == [{"op": "add", "path": "/spec/containers/1", "value": {"name": "sidecar"}}]
    assert diff(obj, obj) == []
    assert diff({"n": 1}, {"n": True}) == [{"op": "replace", "path": "/n", "value": True}]  # 1 is not true


def test_rebase_carries_only_the_handlers_change_onto_the_received_object() -> None:
    received = {"metadata": {"name": "w", "managedFields": [{"manager": "kubectl"}]}, "spec": {"size": 3},
                "unmodelled": {"x": 1}}
    # the model's reading: unknown fields dropped, a default filled in
    read = {"metadata": {"name": "w", "managedFields": [{"manager": "kubectl"}]}, "spec": {"size": 3, "mode": "auto"}}
    returned = {"metadata": {"name": "w", "managedFields": [{"manager": "kubectl"}], "labels": {"l": "v"}},
                "spec": {"size": 3, "mode": "auto"}}
    final = rebase(received, read, returned)
    assert final == {**received, "metadata": {**received["metadata"], "labels": {"l": "v"}}}
    assert diff(received, final) == [{"op": "add", "path": "/metadata/labels", "value": {"l": "v"}}]
    # a change to a defaulted field the object did not carry is written whole
    changed = rebase(received, read, {**read, "spec": {"size": 3, "mode": "manual"}})
    assert changed["spec"] == {"size": 3, "mode": "manual"} and changed["unmodelled"] == {"x": 1}
