"""`ValueIndex`: kopf's ``{key: value}`` index semantics on every read front (the store, informer
handles, the manager's informers and a reconcile's ``ctx.reader()``), over real HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from kubeloop import Context, Controller, Manager, Request, Result
from kubeloop.cache import Reader, SharedCache, Store, ValueIndex
from kubeloop.cache._store import IndexFunctionError
from kubeloop.client import Client

from .informer_support import CM, FAST, MINE, client, cm, eventually, ns

__all__ = ["client", "ns"]


def port_by_team(obj: Mapping[str, Any]) -> dict[str, int] | None:
    """``team -> port`` for a ConfigMap labelled with a team and holding a port."""
    team = (obj["metadata"].get("labels") or {}).get("team")
    port = (obj.get("data") or {}).get("port")
    return {team: int(port)} if team and port else None


PORTS = ValueIndex(port_by_team)


def stored(name: str, team: str, port: int, ns: str = "ns") -> dict[str, Any]:
    obj = cm(name, labels={"team": team}, data={"port": str(port)})
    obj["metadata"].update(namespace=ns, uid=f"uid-{name}", resourceVersion="1")
    return obj


def test_values_are_computed_from_the_objects_under_the_key() -> None:
    store = Store()
    store.add_index("ports", PORTS)
    for name, team, port in (("a", "web", 80), ("b", "web", 443), ("c", "db", 5432)):
        store.apply(stored(name, team, port))
    store.apply(cm("no-port", labels={"team": "web"}) | {"metadata": {"name": "no-port", "namespace": "ns"}})
    assert sorted(store.values("ports", "web")) == [80, 443]
    assert store.values("ports", "db") == [5432]
    assert store.values("ports", "nobody") == []
    assert store.index_keys("ports", "web") == {("ns", "a"), ("ns", "b")}  # an ordinary index too
    store.apply(stored("b", "db", 6432) | {"metadata": {**stored("b", "db", 0)["metadata"], "resourceVersion": "2"}})
    assert store.values("ports", "web") == [80] and sorted(store.values("ports", "db")) == [5432, 6432]
    store.delete("ns", "a")
    assert store.values("ports", "web") == []


def test_reading_values_of_an_ordinary_or_unknown_index_is_a_clear_error() -> None:
    store = Store()
    store.add_index("team", lambda o: (o["metadata"].get("labels") or {}).get("team"))
    with pytest.raises(TypeError, match=r"'team' is not a value index.*ValueIndex"):
        store.values("team", "web")
    with pytest.raises(TypeError, match="'namespace' is not a value index"):
        store.values("namespace", "ns")
    with pytest.raises(KeyError, match="no index named 'nope'"):
        store.values("nope", "web")
    with pytest.raises(TypeError, match="needs a function"):
        ValueIndex("not callable")  # type: ignore[arg-type]


def test_a_function_returning_something_else_than_a_dict_is_refused_with_its_name() -> None:
    def keys_only(obj: Mapping[str, Any]) -> Any:
        return ["web"]

    store = Store()
    store.add_index("bad", ValueIndex(keys_only))
    with pytest.raises(IndexFunctionError, match="keys_only returned list, not a dict"):
        store.apply(stored("a", "web", 80))
    assert len(store) == 0  # the write was not made: the index would have been wrong


async def test_every_read_front_answers_values_alike(client: Client, ns: str) -> None:
    await client.create(cm("web-1", labels={"team": "web"}, data={"port": "80"}), namespace=ns)
    await client.create(cm("web-2", labels={"team": "web"}, data={"port": "443"}), namespace=ns)
    await client.create(cm("db-1", labels={"team": "db"}, data={"port": "5432"}), namespace=ns)
    async with SharedCache(client, watch_config=FAST) as cache:
        broad = await cache.informer_for("default", CM, namespace=ns, label_selector=MINE)
        narrow = await cache.informer_for("default", CM, namespace=ns, label_selector=f"{MINE},team=web")
        await asyncio.gather(broad.wait_synced(5), narrow.wait_synced(5))
        broad.add_index("ports", PORTS)
        narrow.add_index("ports", ValueIndex(port_by_team))  # the same function again: one index, no error
        for r in (broad, broad.reader, broad.informer.store):
            assert isinstance(r, Reader)
            assert sorted(r.values("ports", "web")) == [80, 443] and r.values("ports", "db") == [5432]
        if narrow.shared_from != narrow.scope:  # served by the broader informer: answers in its scope only
            assert narrow.values("ports", "db") == []
        assert sorted(narrow.values("ports", "web")) == [80, 443]
        web2 = await client.get(CM, "web-2", namespace=ns)
        web2["data"]["port"] = "8443"
        await client.replace(web2)
        await eventually(lambda: sorted(broad.values("ports", "web")) == [80, 8443], what="the new value")
        broad.release()
        narrow.release()


async def test_manager_informer_and_reconcile_read_values(client: Client, ns: str) -> None:
    await client.create(cm("web-1", labels={"team": "web"}, data={"port": "80"}), namespace=ns)
    await client.create(cm("web-2", labels={"team": "web"}, data={"port": "443"}), namespace=ns)
    seen: dict[str, list[int]] = {}

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        obj = ctx.get()
        team = obj and (obj["metadata"].get("labels") or {}).get("team")
        if team:
            seen[req.name] = sorted(ctx.reader(CM).values("ports", team))
        return None

    manager = Manager(client)
    pods = manager.informer(CM, namespace=ns, label_selector=MINE, indexes={"ports": PORTS})
    manager.add(Controller("ports", for_=CM, reconcile=reconcile, namespace=ns, label_selector=MINE)
                .index("ports", PORTS))
    async with manager:
        await pods.wait_synced(5)
        assert sorted(pods.values("ports", "web")) == [80, 443]
        await eventually(lambda: seen.get("web-1") == [80, 443] and seen.get("web-2") == [80, 443])
