"""The recorded scenarios of `data/surface-1.24.json`, replayed against the emulator.

Each scenario was sent to a real kube-apiserver 1.24 with kube-controller-manager (see
`record_surface.py`); here the same requests go to an emulator in cluster mode, started as the
recorded control plane was configured: TLS, a static admin token for user `admin` in
`system:masters`, client certificates signed by the cluster CA. Every response is reduced by
`surface.normalize` and must equal the recorded one.
"""

from __future__ import annotations

import json
import os
import secrets
import ssl
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from kubeloop.testing import APIServer, eventually
from kubeloop.testing.apiserver.authn import User

from .surface import Step, request_of, run_steps

DATA = json.loads((Path(__file__).parent / "data" / "surface-1.24.json").read_text())
SCENARIOS: dict[str, Any] = DATA["scenarios"]
ADMIN_TOKEN = "recorded-admin-token"

pytestmark = pytest.mark.skipif(bool(os.environ.get("KUBELOOP_TEST_KUBECONFIG")),
                                reason="compares the emulator with the recording")


class Replay:
    """Sends recorded steps to one emulator as the recorded identities."""

    def __init__(self, api: APIServer, session: aiohttp.ClientSession) -> None:
        self.api, self.session = api, session
        self._tmp = tempfile.TemporaryDirectory()
        self._contexts: dict[tuple[Any, ...], ssl.SSLContext] = {}

    def context(self, cert: tuple[str, tuple[str, ...]] | None = None) -> ssl.SSLContext:
        if cert not in self._contexts:
            assert self.api.ca_pem is not None
            ctx = ssl.create_default_context(cadata=self.api.ca_pem.decode())
            if cert is not None:
                cert_pem, key_pem = self.api.client_certificate(cert[0], cert[1])
                path = Path(self._tmp.name) / f"{secrets.token_hex(4)}.pem"
                path.write_bytes(cert_pem + key_pem)
                ctx.load_cert_chain(str(path))
            self._contexts[cert] = ctx  # type: ignore[index]
        return self._contexts[cert]  # type: ignore[index]

    async def send(self, step: Step) -> tuple[int, str, bytes]:
        headers, data, cert = request_of(step, ADMIN_TOKEN)
        ctx = self.context(None if cert is None else (cert[0], tuple(cert[1])))
        async with self.session.request(step.method, self.api.url + step.path, data=data, headers=headers,
                                        ssl=ctx) as r:
            return r.status, r.headers.get("Content-Type", ""), await r.read()


@pytest_asyncio.fixture
async def replay() -> AsyncIterator[Replay]:
    admin = User("admin", "admin-uid", ("system:masters",))
    async with APIServer(tls=True, token=ADMIN_TOKEN, users={ADMIN_TOKEN: admin}, namespace_delete_delay=0.05,
                         crd_cleanup_delay=0.05) as api, aiohttp.ClientSession() as session:
        yield Replay(api, session)


#: the one rule the recorded control plane's OpenShift carry patch adds to bootstrap RBAC
#: (`system:openshift:public-info-viewer`, see ../shared/real-cluster): not upstream 1.24, not emulated
OPENSHIFT_RULE = {"verbs": ["get"], "nonResourceURLs": ["/.well-known", "/.well-known/*"]}


def _upstream(record: dict[str, Any]) -> dict[str, Any]:
    """A record as an upstream 1.24 server would have made it."""
    status = (record.get("body") or {}).get("status")
    if isinstance(status, dict) and OPENSHIFT_RULE in (status.get("nonResourceRules") or []):
        record = json.loads(json.dumps(record))
        record["body"]["status"]["nonResourceRules"].remove(OPENSHIFT_RULE)
    return record


async def _has_default_sa(replay: Replay, namespace: str) -> bool:
    code, _, _ = await replay.send(Step("GET", f"/api/v1/namespaces/{namespace}/serviceaccounts/default"))
    return code == 200


def _first_difference(want: Any, got: Any, path: str = "$") -> str:
    if isinstance(want, dict) and isinstance(got, dict):
        for key in list(want) + [k for k in got if k not in want]:
            if key not in want or key not in got:
                return f"{path}.{key}: recorded {json.dumps(want.get(key, '<absent>'))[:600]}, " \
                       f"emulator {json.dumps(got.get(key, '<absent>'))[:600]}"
            if want[key] != got[key]:
                return _first_difference(want[key], got[key], f"{path}.{key}")
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            if w != g:
                return _first_difference(w, g, f"{path}[{i}]")
    return f"{path}: recorded {json.dumps(want)[:600]}, emulator {json.dumps(got)[:600]}"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
async def test_recorded_scenario(replay: Replay, name: str) -> None:
    scenario = SCENARIOS[name]
    steps = [Step.from_json(s) for s in scenario["steps"]]
    sfx = secrets.token_hex(3)
    env = {"ns": f"sfc-{sfx}", "sfx": sfx, "admin_token": ADMIN_TOKEN}
    code, _, raw = await replay.send(Step("POST", "/api/v1/namespaces", {"metadata": {"name": env["ns"]}}))
    assert code == 201, raw
    await eventually(lambda: _has_default_sa(replay, env["ns"]))  # pods need it, as on a real cluster
    expected = [_upstream(r) for r in scenario["records"]]
    records = await run_steps(steps, replay.send, env, expected=expected)
    problems = [f"step {i} ({s.name or s.method + ' ' + s.path}): {_first_difference(want, got)}"
                for i, (s, want, got) in enumerate(zip(steps, expected, records, strict=True))
                if s.compare and want != got]
    assert not problems, f"{len(problems)} of {len(steps)} steps differ:\n" + "\n".join(problems)
