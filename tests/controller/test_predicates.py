from typing import Any

from kubeloop.cache import freeze
from kubeloop.controller import (
    always,
    annotations_changed,
    deleting,
    generation_changed,
    labels_changed,
    predicate,
    resource_version_changed,
)


def obj(gen: int = 1, rv: str = "1", labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "a", "generation": gen, "resourceVersion": rv}
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta}


def test_generation_changed_filters_status_only_updates() -> None:
    assert generation_changed(obj(1, "1"), obj(2, "2"))
    assert not generation_changed(obj(1, "1"), obj(1, "2"))  # a status write: RV moves, generation does not
    assert generation_changed(None, obj())  # creations pass
    assert generation_changed(obj(), None)  # deletions pass


def test_labels_annotations_and_rv() -> None:
    assert labels_changed(obj(labels={"a": "1"}), obj(labels={"a": "2"}))
    assert not labels_changed(obj(labels={}), obj())  # absent and empty are the same
    assert annotations_changed(obj(annotations={"x": "1"}), obj())
    assert not annotations_changed(obj(annotations={"x": "1"}), obj(annotations={"x": "1"}))
    assert resource_version_changed(obj(rv="1"), obj(rv="2"))
    assert not resource_version_changed(obj(rv="1"), obj(rv="1"))


def test_changes_are_judged_as_the_api_server_judges_values() -> None:
    # 1 == True in Python; to the API server they are different values
    assert generation_changed(obj(gen=1), obj(gen=True))  # type: ignore[arg-type]
    assert labels_changed(obj(labels={"a": "1"}), obj(labels={"a": "1", "b": None}))  # type: ignore[dict-item]
    assert not labels_changed(obj(labels={"a": "1"}), freeze(obj(labels={"a": "1"})))  # read-only views compare


def test_deleting() -> None:
    assert deleting(obj(), obj(deleting=True))
    assert not deleting(obj(), obj())
    assert not deleting(obj(), None)


def test_composition() -> None:
    @predicate
    def named_a(old: Any, new: Any) -> bool:
        return (new or old)["metadata"]["name"] == "a"

    p = (generation_changed | labels_changed) & named_a
    assert p(obj(1), obj(2))
    assert p(obj(labels={"x": "1"}), obj(labels={"x": "2"}))
    assert not p(obj(1), obj(1))
    assert (~generation_changed)(obj(1), obj(1))
    assert not (~always)(None, obj())
    combined_with_plain_fn = generation_changed | (lambda old, new: new is None)
    assert combined_with_plain_fn(obj(), None)
    assert "generation_changed" in repr(p)
