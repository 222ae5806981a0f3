"""Recorded requests to kube-apiserver 1.24 and the emulator, compared after the same normalization.

`record_surface.py` runs `SCENARIOS` against a real control plane and writes what it answered into
`data/surface-1.24.json`; `test_surface_recorded.py` runs the recorded requests against the emulator
and compares. A scenario is a list of `Step`s sent in order; each response is reduced by
`normalize` (server-chosen values such as uids, resourceVersions, timestamps and tokens become
placeholders) so that two servers that behave the same give equal records.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
TABLE_V1BETA1 = "application/json;as=Table;v=v1beta1;g=meta.k8s.io"
KUBECTL_GET = f"{TABLE},{TABLE_V1BETA1},application/json"

_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
_UID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_GENERATED = re.compile(r"(kube-api-access-)[a-z0-9]{5}\b")
_POINTER = re.compile(r"\(0x[0-9a-f]{6,}\)")
_PEM = re.compile(r"-----BEGIN ([A-Z ]+)-----\n[A-Za-z0-9+/=\n]+-----END \1-----\n?")
#: Table columns whose cells are durations counted from now
AGE_COLUMNS = frozenset({"Age", "Last Seen", "First Seen", "Duration", "Last Schedule"})
#: the fields compared in a managedFields entry (the rest is the schema's detail: see docs/testing.md)
MANAGED_FIELDS_KEYS = ("manager", "operation", "apiVersion", "subresource")


@dataclass
class Step:
    """One request of a scenario.

    `as_` names whom it is sent as (None: the admin; `("token", NAME)`: a token saved by an earlier
    step; `("cert", USER, GROUPS)`: a client certificate; `("anonymous",)`: no credentials).
    `save` maps names to dotted paths of the response to reuse as `{NAME}` in later steps.
    `compare=False` sends it for its effect only; `poll` repeats it (up to 10 s) until its record
    equals the recorded one, for what a controller does eventually.
    """

    method: str
    path: str
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    as_: tuple[Any, ...] | None = None
    save: dict[str, str] = field(default_factory=dict)
    compare: bool = True
    poll: bool = False
    name: str = ""
    #: seconds a recording waits before a polling step (the real server's caches and controllers)
    settle: float = 3.0

    def to_json(self) -> Obj:
        out: Obj = {"method": self.method, "path": self.path}
        for key, value in (("body", self.body), ("headers", self.headers), ("as", self.as_),
                           ("save", self.save), ("name", self.name)):
            if value:
                out[key] = list(value) if key == "as" else value
        if not self.compare:
            out["compare"] = False
        if self.poll:
            out["poll"] = True
        return out

    @staticmethod
    def from_json(d: Obj) -> Step:
        return Step(d["method"], d["path"], d.get("body"), d.get("headers") or {},
                    tuple(d["as"]) if d.get("as") else None, d.get("save") or {}, d.get("compare", True),
                    d.get("poll", False), d.get("name", ""))


#: how a runner sends one request: (step with placeholders filled) -> (code, content type, body bytes)
Send = Callable[[Step], Awaitable[tuple[int, str, bytes]]]


def request_of(step: Step, admin_token: str) -> tuple[dict[str, str], bytes | None, tuple[str, list[str]] | None]:
    """The headers and body of `step` as both servers get it, and the client certificate (user,
    groups) to present, if any."""
    headers = {"Accept": "application/json", "User-Agent": "sfc-recorder/1.0"}
    cert = None
    if step.as_ is None:
        headers["Authorization"] = f"Bearer {admin_token}"
    elif step.as_[0] == "token":
        headers["Authorization"] = f"Bearer {step.as_[1]}"
    elif step.as_[0] == "cert":
        cert = (str(step.as_[1]), list(step.as_[2]))
    data = None
    if step.body is not None:
        data = step.body.encode() if isinstance(step.body, str) else json.dumps(step.body).encode()
        headers["Content-Type"] = "application/json"
    headers.update(step.headers)
    return headers, data, cert


def fill(value: Any, env: dict[str, str]) -> Any:
    """`value` with `{name}` placeholders replaced from `env` (strings anywhere in a JSON value)."""
    if isinstance(value, str):
        for k, v in env.items():
            value = value.replace("{" + k + "}", v)
        return value
    if isinstance(value, list):
        return [fill(v, env) for v in value]
    if isinstance(value, tuple):
        return tuple(fill(v, env) for v in value)
    if isinstance(value, dict):
        return {fill(k, env): fill(v, env) for k, v in value.items()}
    return value


def _strings(value: Any, out: set[str]) -> set[str]:
    if isinstance(value, str):
        out.add(value)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, out)
    return out


def dig(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = obj[int(part)] if isinstance(obj, list) else obj[part]
    return obj


def normalize(code: int, ctype: str, raw: bytes, step: Step, env: dict[str, str]) -> Obj:
    """The comparable record of one response."""
    rec: Obj = {"code": code}
    text = raw.decode("utf-8", "replace")
    if not ctype.startswith("application/json"):
        rec["ctype"] = ctype.split(";")[0]
        rec["text"] = _text(text, env)
        return rec
    if raw and not raw.endswith(b"\n"):
        rec["no_newline"] = True
    if raw.startswith(b"{\n"):
        rec["indented"] = True
    try:
        body = json.loads(raw) if raw.strip() else None
    except ValueError:
        rec["text"] = _text(text, env)
        return rec
    sent = _strings(step.body, set()) | {step.path}
    rec["body"] = _value(body, env, sent, "")
    if isinstance(body, dict) and body.get("kind") == "Status":
        rec["field_order"] = list(body)  # Go encodes a Status's fields in its struct's order
    return rec


def _text(text: str, env: dict[str, str]) -> str:
    for k, v in sorted(env.items(), key=lambda kv: -len(kv[1])):
        if v and k not in ("ns", "sfx"):
            text = text.replace(v, "<" + k + ">")
    for k in ("ns", "sfx"):
        if env.get(k):
            text = text.replace(env[k], "{" + k + "}")
    text = _GENERATED.sub(r"\1<gen>", text)
    text = _PEM.sub(lambda mt: f"<{mt.group(1).lower()}>", text)  # the cluster's own CA and keys
    return _POINTER.sub("(0x<ptr>)", text)


def _value(value: Any, env: dict[str, str], sent: set[str], key: str) -> Any:
    if isinstance(value, dict):
        out: Obj = {}
        cells_age: list[int] = []
        if isinstance(value.get("columnDefinitions"), list):
            cells_age = [i for i, c in enumerate(value["columnDefinitions"]) if c.get("name") in AGE_COLUMNS]
        for k, v in value.items():
            if k in ("uid", "resourceVersion") and isinstance(v, str) and v:
                out[k] = f"<{k}>"
            elif k == "managedFields" and isinstance(v, list):
                # entries written in the same second are ordered by manager name: compared as a set
                out[k] = sorted(({f: _text(str(e.get(f)), env) for f in MANAGED_FIELDS_KEYS if f in e}
                                 for e in v if isinstance(e, dict)), key=lambda e: json.dumps(e, sort_keys=True))
            elif k == "serverAddress":
                out[k] = "<server>"
            elif k in ("token", "continue") and isinstance(v, str) and v:
                out[k] = f"<{k}>"
            elif k in ("resourceRules", "nonResourceRules") and isinstance(v, list):
                # the RBAC authorizer lists rules in its caches' (map) order: compared as a set
                out[k] = sorted((_value(r, env, sent, k) for r in v), key=lambda r: json.dumps(r, sort_keys=True))
            elif k == "rows" and isinstance(v, list) and cells_age:
                out[k] = [_row(r, cells_age, env, sent) for r in v]
            else:
                out[k] = _value(v, env, sent, k)
        return out
    if isinstance(value, list):
        return [_value(v, env, sent, key) for v in value]
    if isinstance(value, str):
        if value not in sent and _TIME.match(value):
            return "<time>"
        if _UID.match(value) and value not in sent:
            return "<uid>"
        return _text(value, env)
    return value


def _row(row: Any, age_cells: list[int], env: dict[str, str], sent: set[str]) -> Any:
    if not isinstance(row, dict):
        return row
    out = _value(row, env, sent, "row")
    cells = out.get("cells")
    if isinstance(cells, list):
        for i in age_cells:
            if i < len(cells) and isinstance(cells[i], str) and re.match(r"^[0-9dhmsy]+$", cells[i]):
                cells[i] = "<age>"
    return out


async def run_steps(steps: list[Step], send: Send, env: dict[str, str],
                    expected: list[Obj] | None = None, recording: bool = False) -> list[Obj]:
    """Send `steps` in order; returns one record per step (saving values into `env` as asked).

    With `expected` (the recorded records), a polling step is repeated until its record equals the
    expected one or 10 s pass; when `recording`, a polling step waits its `settle` seconds first.
    """
    import asyncio
    import time

    records: list[Obj] = []
    for i, step in enumerate(steps):
        concrete = Step(step.method, fill(step.path, env), fill(step.body, env), fill(step.headers, env),
                        fill(step.as_, env) if step.as_ else None, step.save, step.compare, step.poll, step.name,
                        step.settle)
        deadline = time.monotonic() + 10
        if step.poll and recording:
            await asyncio.sleep(step.settle)
        while True:
            code, ctype, raw = await send(concrete)
            rec = normalize(code, ctype, raw, step, env)
            if not (step.poll and expected is not None) or rec == expected[i] or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        if step.save:
            body = json.loads(raw)
            for name, path in step.save.items():
                env[name] = str(dig(body, path))
        records.append(rec if step.compare else {"code": code})
    return records
