"""Object accessors and resourceVersion comparison (`kubeloop.meta`)."""

from __future__ import annotations

from types import MappingProxyType

from kubeloop.meta import (
    annotations_of,
    labels_of,
    metadata_of,
    name_of,
    namespace_of,
    owner_references_of,
    resource_version_of,
    rv_at_least,
    rv_int,
    rv_newer,
    uid_of,
)


def test_accessors_read_metadata_of_dicts_and_views() -> None:
    md = {"name": "a", "namespace": "ns", "uid": "u", "resourceVersion": "7", "labels": {"k": "v"},
          "annotations": {"x": "y"}, "ownerReferences": [{"uid": "o"}]}
    for obj in ({"metadata": md}, MappingProxyType({"metadata": MappingProxyType(md)})):
        assert (name_of(obj), namespace_of(obj), uid_of(obj), resource_version_of(obj)) == ("a", "ns", "u", "7")
        assert dict(labels_of(obj)) == {"k": "v"} and dict(annotations_of(obj)) == {"x": "y"}
        assert [dict(r) for r in owner_references_of(obj)] == [{"uid": "o"}]


def test_accessors_treat_missing_empty_and_malformed_alike() -> None:
    for obj in (None, {}, {"metadata": None}, {"metadata": "x"}, {"metadata": {"name": "", "labels": None}}):
        assert name_of(obj) is None and namespace_of(obj) is None and uid_of(obj) is None
        assert resource_version_of(obj) is None
        assert not labels_of(obj) and not annotations_of(obj) and not owner_references_of(obj)
    assert not metadata_of(None) and not metadata_of({"metadata": ["not", "a", "map"]})
    assert resource_version_of("not an object") is None
    assert resource_version_of({"metadata": {"resourceVersion": 5}}) is None


def test_rv_comparisons() -> None:
    assert rv_newer("10", "9") and not rv_newer("9", "10") and rv_newer("1", None)
    assert not rv_newer("abc", "1") and not rv_newer("2", "abc")
    assert rv_at_least("5", "5") and rv_at_least("x", "x") and rv_at_least("6", "5") and not rv_at_least("4", "5")


def test_only_canonical_decimals_are_ordered() -> None:
    assert rv_int("0") == 0 and rv_int("123") == 123
    for opaque in (None, "", "007", "-1", "+1", " 1", "1_000", "²", "abc"):
        assert rv_int(opaque) is None
