"""ConfigMaps and Secrets: keys, binary data, immutability, Secret types and their required keys."""

from __future__ import annotations

from ..harness import Run
from .common import JSONPATCH, MERGE, namespace


async def scenario_configmaps(run: Run) -> None:
    ns = await namespace(run, "cm")
    base = f"/api/v1/namespaces/{ns}/configmaps"
    await run.req("create with data and binaryData", "POST", base,
                  {"metadata": {"name": "c1"}, "data": {"a": "1"}, "binaryData": {"b": "AAE="}})
    await run.req("create key in both data and binaryData", "POST", base,
                  {"metadata": {"name": "c2"}, "data": {"a": "1"}, "binaryData": {"a": "AAE="}})
    await run.req("create invalid key", "POST", base, {"metadata": {"name": "c3"}, "data": {"a b": "1"}})
    await run.req("create binaryData not base64", "POST", base, {"metadata": {"name": "c4"}, "binaryData": {"b": "%%"}})
    await run.req("create empty maps", "POST", base,
                  {"metadata": {"name": "c5", "labels": {}}, "data": {}, "binaryData": {}})
    await run.req("create immutable", "POST", base, {"metadata": {"name": "c6"}, "data": {"a": "1"}, "immutable": True})
    await run.req("change immutable data", "PATCH", f"{base}/c6", {"data": {"a": "2"}}, ctype=MERGE)
    await run.req("make it mutable again", "PATCH", f"{base}/c6", {"immutable": False}, ctype=MERGE)
    await run.req("labels of an immutable one", "PATCH", f"{base}/c6", {"metadata": {"labels": {"x": "y"}}},
                  ctype=MERGE)
    await run.req("add data by json patch", "PATCH", f"{base}/c1", [{"op": "add", "path": "/data/z", "value": "26"}],
                  ctype=JSONPATCH)
    await run.req("null value in data", "POST", base, {"metadata": {"name": "c7"}, "data": {"a": None, "b": "x"}})
    await run.req("number in data", "POST", base, {"metadata": {"name": "c8"}, "data": {"a": 1}})
    await run.req("list configmaps", "GET", base, unordered=True)


async def scenario_secrets(run: Run) -> None:
    ns = await namespace(run, "sec")
    base = f"/api/v1/namespaces/{ns}/secrets"
    await run.req("create opaque (default type)", "POST", base, {"metadata": {"name": "s1"}, "data": {"a": "YQ=="}})
    await run.req("create with stringData", "POST", base,
                  {"metadata": {"name": "s2"}, "data": {"a": "YQ=="}, "stringData": {"a": "b", "c": "d"}})
    await run.req("create data not base64", "POST", base, {"metadata": {"name": "s3"}, "data": {"a": "not base64!"}})
    await run.req("create tls without keys", "POST", base,
                  {"metadata": {"name": "s4"}, "type": "kubernetes.io/tls", "data": {"tls.crt": "YQ=="}})
    await run.req("create dockerconfigjson without key", "POST", base,
                  {"metadata": {"name": "s5"}, "type": "kubernetes.io/dockerconfigjson", "data": {}})
    await run.req("create dockerconfigjson not json", "POST", base,
                  {"metadata": {"name": "s6"}, "type": "kubernetes.io/dockerconfigjson",
                   "data": {".dockerconfigjson": "bm90IGpzb24="}})
    await run.req("create basic-auth", "POST", base,
                  {"metadata": {"name": "s7"}, "type": "kubernetes.io/basic-auth", "stringData": {"username": "u"}})
    await run.req("create ssh-auth without key", "POST", base,
                  {"metadata": {"name": "s8"}, "type": "kubernetes.io/ssh-auth", "data": {}})
    await run.req("change type (immutable)", "PATCH", f"{base}/s1", {"type": "kubernetes.io/tls"}, ctype=MERGE)
    await run.req("bad key", "POST", base, {"metadata": {"name": "s9"}, "data": {"/x": "YQ=="}})
    await run.req("immutable secret", "POST", base,
                  {"metadata": {"name": "s10"}, "data": {"a": "YQ=="}, "immutable": True})
    await run.req("change an immutable secret", "PATCH", f"{base}/s10", {"data": {"a": "Yg=="}}, ctype=MERGE)
    await run.req("get secret", "GET", f"{base}/s2")
