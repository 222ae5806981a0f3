import pytest

from kubeloop.meta import AlreadyOwnedError, controller_of, set_controller_reference


def parent(uid: str = "u1", name: str = "p") -> dict:
    return {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": "ns", "uid": uid}}


def test_sets_and_updates_controller_reference() -> None:
    child: dict = {"metadata": {"name": "c", "namespace": "ns"}}
    set_controller_reference(parent(), child)
    set_controller_reference(parent(), child)  # idempotent
    refs = child["metadata"]["ownerReferences"]
    assert refs == [{"apiVersion": "example.com/v1", "kind": "Widget", "name": "p", "uid": "u1",
                     "controller": True, "blockOwnerDeletion": True}]
    assert controller_of(child) == refs[0]


def test_refuses_second_controller_and_cross_namespace() -> None:
    child: dict = {"metadata": {"name": "c", "namespace": "ns"}}
    set_controller_reference(parent(), child)
    with pytest.raises(AlreadyOwnedError, match="already controlled by Widget 'p'"):
        set_controller_reference(parent(uid="u2", name="q"), child)
    other: dict = {"metadata": {"name": "c", "namespace": "elsewhere"}}
    with pytest.raises(ValueError, match="cross-namespace"):
        set_controller_reference(parent(), other)


def test_owner_without_uid_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"metadata\.uid"):
        set_controller_reference({"apiVersion": "v1", "kind": "X", "metadata": {"name": "n"}}, {})
    assert controller_of({"metadata": {}}) is None
