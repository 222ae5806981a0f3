"""Scope keys and the subset logic (pure, no I/O)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeloop.cache import (
    DEFAULT_TRANSFORM,
    FrozenDict,
    MetadataOnlyError,
    Scope,
    Selection,
    compose,
    drop_annotations,
    drop_fields,
    strip_managed_fields,
)

R = "core/v1/configmaps"


def obj(ns: str, name: str, labels: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"metadata": {"namespace": ns, "name": name, "labels": labels or {}}, **extra}


def test_equal_arguments_give_equal_hashable_keys() -> None:
    a = Scope.of("default", R, namespace="x", label_selector="b=2,a=1", transform=DEFAULT_TRANSFORM)
    b = Scope.of("default", R, namespace="x", label_selector={"a": "1", "b": "2"}, transform=DEFAULT_TRANSFORM)
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1
    assert Scope.of("default", R, namespace="") == Scope.of("default", R, namespace=None)


@pytest.mark.parametrize(("broad", "narrow", "covered"), [
    ({}, {"namespace": "x"}, True),
    ({"namespace": "x"}, {"namespace": "x", "label_selector": "a=1"}, True),
    ({"namespace": "x"}, {"namespace": "y"}, False),
    ({"namespace": "x"}, {}, False),
    ({"label_selector": "a"}, {"label_selector": "a=1"}, True),
    ({"label_selector": "a in (1,2)"}, {"label_selector": "a=1,b=2"}, True),
    ({"label_selector": "a=1"}, {"label_selector": "a in (1,2)"}, False),
    ({"label_selector": "a=1"}, {}, False),
    ({"field_selector": "metadata.namespace=x"}, {"namespace": "x"}, True),
    ({"field_selector": "status.phase=Running"}, {"field_selector": "status.phase=Running,spec.nodeName=n"}, True),
    ({"field_selector": "status.phase=Running"}, {}, False),
    ({}, {"metadata_only": True}, True),  # served from the full objects, projected
    ({"metadata_only": True}, {}, False),
    ({"transform": None}, {"transform": DEFAULT_TRANSFORM}, False),
    ({"transform": DEFAULT_TRANSFORM}, {"transform": None}, False),
])
def test_covers(broad: dict[str, Any], narrow: dict[str, Any], covered: bool) -> None:
    broad.setdefault("transform", DEFAULT_TRANSFORM)
    narrow.setdefault("transform", DEFAULT_TRANSFORM)
    assert Scope.of("default", R, **broad).covers(Scope.of("default", R, **narrow)) is covered


def test_other_cluster_or_resource_is_never_covered() -> None:
    assert not Scope.of("a", R).covers(Scope.of("b", R))
    assert not Scope.of("a", R).covers(Scope.of("a", "core/v1/secrets"))


def test_filters_are_covered_only_by_an_unfiltered_or_identical_scope() -> None:
    def f(o: Any) -> bool:
        return True

    def g(o: Any) -> bool:
        return True

    assert Scope.of("c", R).covers(Scope.of("c", R, filter=f))
    assert Scope.of("c", R, filter=f).covers(Scope.of("c", R, filter=f, namespace="x"))
    assert not Scope.of("c", R, filter=f).covers(Scope.of("c", R, filter=g))
    assert not Scope.of("c", R, filter=f).covers(Scope.of("c", R))


def test_narrowing_predicate() -> None:
    broad = Scope.of("c", R)
    assert broad.narrowing(broad) is None
    pred = broad.narrowing(Scope.of("c", R, namespace="x", label_selector="tier=web",
                                    field_selector="status.phase!=Failed", filter=lambda o: "skip" not in o))
    assert pred is not None
    assert pred(obj("x", "a", {"tier": "web"}))
    assert not pred(obj("y", "a", {"tier": "web"}))
    assert not pred(obj("x", "a", {"tier": "db"}))
    assert not pred(obj("x", "a", {"tier": "web"}, status={"phase": "Failed"}))
    assert not pred(obj("x", "a", {"tier": "web"}, skip=True))


def test_transforms_have_stable_identity_and_do_their_job() -> None:
    assert DEFAULT_TRANSFORM is strip_managed_fields
    o = {"metadata": {"name": "a", "managedFields": [{}], "annotations": {"big": "x", "keep": "y"}},
         "status": {"a": 1}}
    t = compose(strip_managed_fields, drop_fields("status"), drop_annotations("big"))
    assert t is not None and compose(None) is None and compose(DEFAULT_TRANSFORM) is DEFAULT_TRANSFORM
    assert t(o) == {"metadata": {"name": "a", "annotations": {"keep": "y"}}}
    assert drop_annotations("keep")(o) == {"metadata": {"name": "a"}}
    assert drop_fields("spec.x.y")({"spec": 1}) == {"spec": 1}  # non-dict on the way: untouched


label_sets = st.dictionaries(st.sampled_from(["a", "b", "c"]), st.sampled_from(["1", "2", "3"]), max_size=3)
selectors = st.lists(st.sampled_from(["a=1", "a!=2", "b", "!c", "a in (1,2)", "b notin (3)", "c=3"]),
                     max_size=3).map(",".join)


@given(broad=selectors, narrow=selectors, labels=label_sets, ns=st.sampled_from(["x", "y"]))
def test_narrowing_a_covering_scope_selects_exactly_the_narrow_scope(broad: str, narrow: str,
                                                                     labels: dict[str, str], ns: str) -> None:
    b = Scope.of("c", R, label_selector=broad)
    n = Scope.of("c", R, namespace="x", label_selector=narrow)
    narrow_matches = ns == "x" and n.label_selector.matches(labels)
    if not b.covers(n):
        return
    assert not narrow_matches or b.label_selector.matches(labels)  # covered: never more than the broad one
    if b.label_selector.matches(labels):  # what the broad informer holds
        pred = b.narrowing(n)
        assert (pred(obj(ns, "o", labels)) if pred is not None else True) == narrow_matches


def test_a_selection_value_and_its_keywords_make_the_same_scope() -> None:
    sel = Selection(namespace="x", label_selector={"a": "1"}, metadata_only=True)
    assert Scope.of("c", R, sel) == Scope.of("c", R, namespace="x", label_selector="a=1", metadata_only=True)
    assert Scope.of("c", R, sel, namespace="y").namespace == "y"  # keywords refine the value
    assert Scope.of("c", R).transform is DEFAULT_TRANSFORM  # the default transform, as informer_for's
    with pytest.raises(TypeError, match="namespace"):
        Selection(namespace=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unexpected selection option"):
        Scope.of("c", R, labels="a=1")  # type: ignore[call-arg]


def test_a_metadata_only_scope_is_a_projection_of_a_full_one() -> None:
    full, meta = Scope.of("default", R), Scope.of("default", R, namespace="x", metadata_only=True)
    project = full.projection(meta)
    assert project is not None and full.projection(full) is None and meta.projection(meta) is None
    obj = FrozenDict({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {"k": "v"}},
                      "data": {"x": "y"}})
    partial = project(obj)
    assert dict(partial) == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": {"name": "a", "labels": {"k": "v"}}}
    assert project(partial) is partial
    with pytest.raises(MetadataOnlyError):
        partial["data"]
