"""Cluster mode: what kube-controller-manager does next to the API server (the emulator's default)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from tests.testing.conftest import Http

NS = "/api/v1/namespaces"


async def _until(probe: Callable[[], Awaitable[Any]], done: Callable[[Any], bool], within: float = 3.0) -> Any:
    """Poll `probe` until `done` holds (controllers react asynchronously, as on a real cluster)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        value = await probe()
        if done(value) or loop.time() > deadline:
            return value
        await asyncio.sleep(0.01)


async def test_new_namespace_gets_root_ca_and_default_service_account(cluster_http: Http) -> None:
    http = cluster_http
    await http.post(NS, {"metadata": {"name": "boot"}})
    cm_path = f"{NS}/boot/configmaps/kube-root-ca.crt"

    async def both() -> list[int]:
        return [(await http.get(cm_path))[0], (await http.get(f"{NS}/boot/serviceaccounts/default"))[0]]
    assert await _until(both, lambda v: v == [200, 200]) == [200, 200]
    _, root_ca = await http.get(cm_path)
    assert root_ca["data"]["ca.crt"].startswith("-----BEGIN CERTIFICATE-----")
    assert [m["manager"] for m in root_ca["metadata"]["managedFields"]] == ["kube-controller-manager"]

    # deleted: re-created (a new uid); edited: the CA bundle is put back, other edits stay
    await http.req("DELETE", cm_path)
    recreated = await _until(lambda: http.get(cm_path),
                             lambda r: r[0] == 200 and r[1]["metadata"]["uid"] != root_ca["metadata"]["uid"])
    assert recreated[0] == 200 and recreated[1]["data"] == root_ca["data"]
    await http.req("PATCH", cm_path, {"data": {"ca.crt": "tampered"}, "metadata": {"labels": {"x": "1"}}},
                   ctype="application/merge-patch+json")
    _, restored = await _until(lambda: http.get(cm_path), lambda r: r[1]["data"] == root_ca["data"])
    assert restored["data"] == root_ca["data"] and restored["metadata"]["labels"] == {"x": "1"}

    await http.req("DELETE", f"{NS}/boot/serviceaccounts/default")
    code, _ = await _until(lambda: http.get(f"{NS}/boot/serviceaccounts/default"), lambda r: r[0] == 200)
    assert code == 200


async def test_bare_namespace_is_empty_and_stays_terminating(http: Http) -> None:
    """`bare=True` is kube-apiserver alone: no bootstrap content, and no namespace controller."""
    await http.post(NS, {"metadata": {"name": "bare"}})
    await asyncio.sleep(0.05)
    _, cms = await http.get(f"{NS}/bare/configmaps")
    _, sas = await http.get(f"{NS}/bare/serviceaccounts")
    assert cms["items"] == [] and sas["items"] == []
    await http.req("DELETE", f"{NS}/bare")
    await asyncio.sleep(0.2)  # well past the fixture's namespace_delete_delay
    code, ns = await http.get(f"{NS}/bare")
    assert code == 200 and ns["status"]["phase"] == "Terminating"
