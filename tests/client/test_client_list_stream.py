"""`Client.list_stream` over HTTP: the items of a LIST as they arrive, with the list's
resourceVersion and continue token at the end, `kind` filled in, and typed errors."""

from __future__ import annotations

import pytest

from kubeloop.client import BadRequest, Client, ListStream

from ..builders import MINE, cm, label


async def read(stream: ListStream) -> list[dict]:
    items: list[dict] = []
    async with stream:
        while batch := await stream.batches():
            items.extend(batch)
    return items


async def test_a_list_read_page_by_page(client: Client, ns: str) -> None:
    for i in range(5):
        await client.create(label(cm(f"c{i}")), namespace=ns)
    stream = client.list_stream("v1/ConfigMap", namespace=ns, label_selector=MINE, limit=2)
    first = await read(stream)
    assert [o["metadata"]["name"] for o in first] == ["c0", "c1"]
    assert all(o["kind"] == "ConfigMap" and o["apiVersion"] == "v1" for o in first)
    assert stream.continue_token and stream.resource_version and stream.kind == "ConfigMapList"
    names = [o["metadata"]["name"] for o in first]
    token: str | None = stream.continue_token
    while token:
        page = client.list_stream("v1/ConfigMap", namespace=ns, label_selector=MINE, limit=2, continue_token=token)
        names += [o["metadata"]["name"] for o in await read(page)]
        token = page.continue_token
    assert names == [f"c{i}" for i in range(5)]
    assert await read(client.list_stream("v1/ConfigMap", namespace=ns, label_selector="nothing=here")) == []


async def test_a_refused_list_raises_typed_on_open(client: Client, ns: str) -> None:
    with pytest.raises(BadRequest):
        await read(client.list_stream("v1/ConfigMap", namespace=ns, label_selector="a in (b"))
