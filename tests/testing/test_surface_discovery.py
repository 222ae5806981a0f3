"""The emulator's discovery documents against kube-apiserver 1.24's, resource by resource.

`data/surface-1.24.json` holds `/api`, `/apis` and every group and group-version document the
real server served (recorded by `record_surface.py`). Every group, version, resource and
subresource must be served with the same names, singularName, namespaced, kind, verbs, shortNames,
categories, storageVersionHash and (for subresources) group and version.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from kubeloop.testing import APIServer

DATA = json.loads((Path(__file__).parent / "data" / "surface-1.24.json").read_text())
DISCOVERY: dict[str, Any] = DATA["discovery"]

pytestmark = pytest.mark.skipif(bool(os.environ.get("KUBELOOP_TEST_KUBECONFIG")),
                                reason="compares the emulator with the recording")


async def _served(paths: list[str]) -> dict[str, Any]:
    async with APIServer(bare=True) as api, aiohttp.ClientSession() as s:
        out = {}
        for path in paths:
            async with s.get(api.url + path) as r:
                assert r.status == 200, f"{path}: {r.status} {await r.text()}"
                out[path] = await r.json()
        out["/api"]["serverAddressByClientCIDRs"] = [{"clientCIDR": "0.0.0.0/0", "serverAddress": "<server>"}]
        return out


def _by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in doc.get("resources", [])}


async def test_every_group_version_and_resource_is_served_as_recorded() -> None:
    served = await _served(list(DISCOVERY))
    assert served["/api"] == DISCOVERY["/api"]
    assert served["/apis"] == DISCOVERY["/apis"], "groups, their versions and their order"
    differences = []
    for path, recorded in DISCOVERY.items():
        if "resources" not in recorded:
            assert served[path] == recorded, path
            continue
        have, want = _by_name(served[path]), _by_name(recorded)
        for name in sorted(set(have) | set(want)):
            if have.get(name) != want.get(name):
                differences.append(f"{path} {name}: served {have.get(name)}, recorded {want.get(name)}")
        assert [r["name"] for r in served[path]["resources"]] == [r["name"] for r in recorded["resources"]], path
        assert {k: v for k, v in served[path].items() if k != "resources"} == \
            {k: v for k, v in recorded.items() if k != "resources"}, path
    assert not differences, "\n".join(differences)


async def test_a_crd_group_follows_the_built_in_ones() -> None:
    """Custom resource groups come after every built-in group, as kube-aggregator orders them
    (group priority 1000 is below every built-in's)."""
    async with APIServer(bare=True, crd_cleanup_delay=0.05) as api, aiohttp.ClientSession() as s:
        crd = {"metadata": {"name": "things.aaa.example.com"}, "spec": {
            "group": "aaa.example.com", "scope": "Namespaced", "names": {"plural": "things", "kind": "Thing"},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                "type": "object"}}}]}}
        async with s.post(api.url + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd) as r:
            assert r.status == 201
        async with s.get(api.url + "/apis") as r:
            names = [g["name"] for g in (await r.json())["groups"]]
        assert names[-1] == "aaa.example.com"
        assert names[:-1] == [g["name"] for g in DISCOVERY["/apis"]["groups"]]
