"""`kubectl get` columns: the emulator's Tables against kube-apiserver 1.24's, for every built-in kind.

`data/surface-1.24.json` holds, for one object of each kind, the Table the real server answered
(`includeObject=Object`, so the object it was printed from comes with it). Here each object is
stored in an emulator as it was (its status written through `/status`), printed again, and the
column definitions and cells must be the same. Durations (Age, Last Seen, ...) are compared as
durations, uids as uids. kubectl prints exactly these Tables, so equal Tables are equal
`kubectl get` (and `-o wide`) output.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from kubeloop.testing import APIServer
from kubeloop.testing.apiserver.authn import User

from .conftest import Http
from .surface import AGE_COLUMNS, TABLE, fill

DATA = json.loads((Path(__file__).parent / "data" / "surface-1.24.json").read_text())
TABLES: list[dict[str, Any]] = DATA["tables"]
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_DURATION = re.compile(r"^[0-9dhmsy]+$")
SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "deletionTimestamp",
                 "deletionGracePeriodSeconds")

pytestmark = pytest.mark.skipif(bool(os.environ.get("KUBELOOP_TEST_KUBECONFIG")),
                                reason="compares the emulator with the recording")


@pytest_asyncio.fixture
async def printed() -> AsyncIterator[dict[str, Any]]:
    """Every recorded object stored in one bare emulator and printed back (path -> Table)."""
    sfx = secrets.token_hex(3)
    env = {"ns": f"sfc-{sfx}", "sfx": sfx}
    out: dict[str, Any] = {}
    token = "recorded-admin-token"  # the recorded control plane's admin: user admin in system:masters
    async with APIServer(bare=True, token=token, users={token: User("admin", "admin-uid", ("system:masters",))}) \
            as api, aiohttp.ClientSession() as session:
        http = Http(session, api.url, token)
        code, body = await http.post("/api/v1/namespaces", {"metadata": {"name": env["ns"]}})
        assert code == 201, body
        for entry in TABLES:
            obj = fill(entry["table"]["rows"][0]["object"], env)
            path = fill(entry["path"], env)
            await _store(http, path, obj)
            name = obj["metadata"]["name"]
            code, table = await http.req("GET", f"{path}/{name}", headers={"Accept": TABLE})
            assert code == 200, (path, table)
            code, listed = await http.req("GET", path, headers={"Accept": TABLE},
                                          fieldSelector=f"metadata.name={name}")
            assert code == 200, (path, listed)
            out[f"{entry['path']}/{entry['name']}"] = (table, listed, env)
        yield out


async def _store(http: Http, path: str, obj: dict[str, Any]) -> None:
    """Create `obj` as it was recorded, then write its status (which a create does not keep)."""
    meta = obj["metadata"]
    for key in SERVER_FIELDS:
        meta.pop(key, None)
    body = dict(obj)
    if "/jobs" in path:  # the server chooses a Job's selector (and its controller-uid) itself
        spec = body["spec"] = dict(body["spec"])
        spec.pop("selector", None)
        template = spec["template"] = dict(spec["template"])
        template["metadata"] = {k: v for k, v in (template.get("metadata") or {}).items() if k != "labels"}
    code, created = await http.post(path, body)
    assert code == 201, (path, created)
    if obj.get("status") and created.get("status") != obj["status"]:
        update = dict(created, status=obj["status"])
        code, written = await http.req("PUT", f"{path}/{meta['name']}/status", update)
        assert code in (200, 404, 405), (path, written)


def _cells(table: dict[str, Any], env: dict[str, str]) -> list[Any]:
    columns = table["columnDefinitions"]
    cells = list(table["rows"][0]["cells"])
    for i, column in enumerate(columns):
        value = cells[i]
        if isinstance(value, str):
            value = _UUID.sub("<uid>", value.replace(env["ns"], "{ns}").replace(env["sfx"], "{sfx}"))
            if column["name"] in AGE_COLUMNS and _DURATION.match(value):
                value = "<duration>"
            elif column["type"] == "date":
                value = "<time>"
        cells[i] = value
    return cells


async def test_table_columns_and_cells_as_recorded(printed: dict[str, Any]) -> None:
    differences = []
    for entry in TABLES:
        recorded = entry["table"]
        table, listed, env = printed[f"{entry['path']}/{entry['name']}"]
        want = _cells(recorded, {"ns": "{ns}", "sfx": "{sfx}"})
        where = f"{entry['path']} {entry['name']}"
        if table["columnDefinitions"] != recorded["columnDefinitions"]:
            differences.append(f"{where}: columns {[c['name'] for c in table['columnDefinitions']]}, recorded "
                               f"{[c['name'] for c in recorded['columnDefinitions']]}")
        elif _cells(table, env) != want:
            differences.append(f"{where}: cells {_cells(table, env)}, recorded {want}")
        elif [_cells({"columnDefinitions": listed["columnDefinitions"], "rows": [r]}, env)
              for r in listed["rows"]] != [want]:
            differences.append(f"{where}: the list's Table differs from the object's")
    assert not differences, f"{len(differences)} of {len(TABLES)} Tables differ:\n" + "\n".join(differences)
