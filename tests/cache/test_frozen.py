"""Read-only views: nothing reachable from a cached object can be changed."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson
import pytest

from kubeloop.cache import FrozenDict, FrozenList, ReadOnlyError, freeze, json_default, thaw
from kubeloop.cache._frozen import dumps, unwrap


def sample() -> dict[str, Any]:
    return {
        "metadata": {"name": "a", "labels": {"app": "x"}, "finalizers": ["f1"]},
        "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}]}], "replicas": 3},
        "status": None,
    }


DICT_MUTATIONS: list[tuple[str, Callable[[Any], Any]]] = [
    ("setitem", lambda d: d.__setitem__("k", 1)),
    ("delitem", lambda d: d.__delitem__(next(iter(d)))),
    ("update", lambda d: d.update({"k": 1})),
    ("update-kw", lambda d: d.update(k=1)),
    ("pop", lambda d: d.pop(next(iter(d)))),
    ("popitem", lambda d: d.popitem()),
    ("clear", lambda d: d.clear()),
    ("setdefault", lambda d: d.setdefault("k", 1)),
    ("ior", lambda d: d.__ior__({"k": 1})),
    ("setattr", lambda d: setattr(d, "_raw", {})),
    ("delattr", lambda d: delattr(d, "_raw")),
]
LIST_MUTATIONS: list[tuple[str, Callable[[Any], Any]]] = [
    ("setitem", lambda v: v.__setitem__(0, 1)),
    ("setslice", lambda v: v.__setitem__(slice(0, 1), [1])),
    ("delitem", lambda v: v.__delitem__(0)),
    ("append", lambda v: v.append(1)),
    ("extend", lambda v: v.extend([1])),
    ("insert", lambda v: v.insert(0, 1)),
    ("remove", lambda v: v.remove(v[0])),
    ("pop", lambda v: v.pop()),
    ("clear", lambda v: v.clear()),
    ("sort", lambda v: v.sort()),
    ("reverse", lambda v: v.reverse()),
    ("iadd", lambda v: v.__iadd__([1])),
    ("imul", lambda v: v.__imul__(2)),
    ("setattr", lambda v: setattr(v, "_raw", [])),
]


def containers(view: FrozenDict) -> list[tuple[str, Any]]:
    """Every dict/list view reachable from ``view`` with a path, via indexing and iteration."""
    out: list[tuple[str, Any]] = [("$", view)]
    stack: list[tuple[str, Any]] = [("$", view)]
    while stack:
        path, v = stack.pop()
        children = (
            [(f"{path}.{k}", v[k]) for k in v] + [(f"{path}.{k}(get)", v.get(k)) for k in v]
            + [(f"{path}.{k}(values)", x) for k, x in zip(v, v.values(), strict=True)]
            if isinstance(v, FrozenDict)
            else [(f"{path}[{i}]", x) for i, x in enumerate(v)] + [(f"{path}[idx]", v[0])] * bool(len(v))
        )
        for p, c in children:
            if isinstance(c, (FrozenDict, FrozenList)):
                out.append((p, c))
                if "(" not in p:
                    stack.append((p, c))
            else:
                assert not isinstance(c, (dict, list)), f"{p} leaked a mutable {type(c).__name__}"
    return out


def test_every_mutation_at_every_level_raises() -> None:
    raw = sample()
    before = orjson.dumps(raw)
    view = FrozenDict(raw)
    reached = containers(view)
    assert len(reached) >= 10
    for path, c in reached:
        muts = DICT_MUTATIONS if isinstance(c, FrozenDict) else LIST_MUTATIONS
        for name, mutate in muts:
            if len(c) == 0 and name in ("delitem", "pop", "remove", "setitem"):
                continue
            with pytest.raises(ReadOnlyError) as e:
                mutate(c)
            assert isinstance(e.value, TypeError), (path, name)
            assert "kubeloop.cache.thaw(obj)" in str(e.value)
    assert orjson.dumps(raw) == before


def test_items_and_slices_are_views() -> None:
    view = FrozenDict(sample())
    for _, v in view.items():
        assert not isinstance(v, (dict, list))
    ports = view["spec"]["containers"][0:1]
    assert isinstance(ports, FrozenList)
    with pytest.raises(ReadOnlyError):
        ports[0]["name"] = "z"
    assert isinstance(dict(view)["metadata"], FrozenDict)  # a shallow dict() keeps nested read-only


def test_behaves_like_mapping_and_sequence() -> None:
    raw = sample()
    view = FrozenDict(raw)
    assert isinstance(view, Mapping) and not isinstance(view, dict)
    assert view == raw and raw == view and view == FrozenDict(sample())
    assert view != {"x": 1}
    assert "metadata" in view and "nope" not in view
    assert len(view) == 3 and list(view) == list(raw)
    assert view.get("nope") is None and view.get("nope", 5) == 5
    assert view["metadata"]["name"] == "a"
    fins = view["metadata"]["finalizers"]
    assert isinstance(fins, Sequence)
    assert fins == ["f1"] and "f1" in fins and fins.index("f1") == 0 and fins.count("f1") == 1
    assert list(reversed(fins)) == ["f1"]
    assert view["spec"]["containers"][-1]["ports"][0] == {"containerPort": 80}
    assert {"name": "c", "ports": [{"containerPort": 80}]} in view["spec"]["containers"]
    assert view["spec"]["containers"] + [1] == [raw["spec"]["containers"][0], 1]
    assert view | {"x": 1} == {**raw, "x": 1}


def test_unhashable_like_dict_and_list() -> None:
    view = FrozenDict(sample())
    with pytest.raises(TypeError):
        hash(view)
    with pytest.raises(TypeError):
        hash(view["metadata"]["finalizers"])


def test_thaw_and_deepcopy_give_independent_plain_copies() -> None:
    raw = sample()
    view = FrozenDict(raw)
    for mutable in (thaw(view), view.thaw(), copy.deepcopy(view)):
        assert type(mutable) is dict and mutable == raw
        assert type(mutable["spec"]["containers"]) is list
        mutable["metadata"]["labels"]["new"] = "1"
        mutable["spec"]["containers"].append({})
        assert "new" not in raw["metadata"]["labels"] and len(raw["spec"]["containers"]) == 1
    lst = thaw(view["metadata"]["finalizers"])
    assert type(lst) is list and lst == ["f1"]
    assert copy.copy(view) is view
    assert thaw(5) == 5


def test_json_serialization() -> None:
    raw = sample()
    view = FrozenDict(raw)
    assert orjson.loads(orjson.dumps(view, default=json_default)) == raw
    assert orjson.loads(dumps(view)) == raw
    assert json.loads(json.dumps(view, default=json_default)) == raw
    assert orjson.loads(orjson.dumps({"wrapped": view["metadata"]}, default=json_default)) == {
        "wrapped": raw["metadata"]
    }
    with pytest.raises(TypeError):
        json_default(object())


def test_pickle_and_freeze_unwrap() -> None:
    raw = sample()
    view = FrozenDict(raw)
    again = pickle.loads(pickle.dumps(view))
    assert isinstance(again, FrozenDict) and again == raw
    assert freeze(view) is view and freeze(3) == 3 and isinstance(freeze([1]), FrozenList)
    assert unwrap(view) is raw
    assert repr(view).startswith("FrozenDict(")


def test_to_builtin_makes_a_cached_object_json_serializable() -> None:
    from types import MappingProxyType

    import kubeloop
    from kubeloop.cache import Store, json_default, to_builtin

    store = Store()
    store.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "n",
                                                                       "resourceVersion": "1", "labels": {"x": "1"}},
                 "data": {"k": "v"}})
    view = store.get("a", "n")
    assert view is not None
    with pytest.raises(TypeError, match="not JSON serializable"):
        json.dumps(view)  # a read-only view is not a dict: this is what to_builtin is for
    plain = kubeloop.to_builtin(view)
    assert type(plain) is dict and type(plain["metadata"]["labels"]) is dict
    assert json.loads(json.dumps(plain)) == plain == json.loads(json.dumps(view, default=json_default))
    plain["data"]["k"] = "changed"  # a copy of its own
    assert view["data"]["k"] == "v"
    nested = {"views": [view["metadata"], MappingProxyType({"big": 2**70})], "t": (1, "2")}
    assert to_builtin(nested) == {"views": [to_builtin(view["metadata"]), {"big": 2**70}], "t": [1, "2"]}
    assert to_builtin("text") == "text" and to_builtin(None) is None
