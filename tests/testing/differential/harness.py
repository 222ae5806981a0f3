"""Differential scenarios: the same requests to a real kube-apiserver (recorded) and to the emulator
(replayed in CI), each response reduced to a projection that leaves out only what no two servers
can share.

A scenario is an async function of a `Run`: it sends requests with `run.req(step, ...)` (each one
recorded under its step name), may read earlier responses to build later requests (a
resourceVersion, a uid), and records facts it derives (`run.fact`). Projections keep status codes,
Warning headers, Status bodies (reason, message, details and causes) and whole objects, with these
masks:

- the run's random suffix (`<sfx>`, in every name and message), uids (`<uid>`), timestamps
  (`<ts>`), resourceVersions (`<rv>`, also inside messages), names made from `generateName`
  (`prefix<gen>`), allocated cluster IPs (`<ip>`) and node ports (`<port>`), Go pointers printed
  in messages (`<ptr>`);
- `managedFields[].time` (the manager, operation, apiVersion, fields and subresource stay).

Lists are reduced to their kind, item names (sorted where the real server's order is not defined:
lists served from the watch cache) and whether they continue. Watches record their events (type
and object projection; bookmarks dropped).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import re
import secrets
import ssl
import string
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

Obj = dict[str, Any]
Scenario = Callable[["Run"], Awaitable[None]]

_UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TS = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2}| \+0000 UTC)?")
_SERVICE_IP = re.compile(r"\b10\.96\.\d{1,3}\.\d{1,3}\b")
_GO_POINTER = re.compile(r"\b0x[0-9a-f]{6,}\b")
#: resourceVersions inside messages: the numbers right after "resourceVersion"-like words ("the
#: ResourceVersion in the precondition (12)", "Too large resource version: 99, current: 12",
#: "too old resource version: 3 (7)")
_RV_IN_TEXT = re.compile(r"((?:[Rr]esource ?[Vv]ersion|current)[^0-9\n]{0,40}?)(\d+)(\)? \()?(\d+)?")


def new_suffix() -> str:
    return "z" + "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(5))


@dataclass
class Resp:
    """One response: status code, headers that matter, body (JSON when it is JSON)."""

    code: int
    ctype: str
    warnings: list[str]
    body: Any

    @property
    def obj(self) -> Obj:
        return self.body if isinstance(self.body, dict) else {}

    @property
    def rv(self) -> str:
        return str((self.obj.get("metadata") or {}).get("resourceVersion") or "")

    @property
    def uid(self) -> str:
        return str((self.obj.get("metadata") or {}).get("uid") or "")


@dataclass
class Run:
    """One scenario run against one server."""

    url: str
    session: aiohttp.ClientSession
    token: str | None = None
    ssl_context: ssl.SSLContext | bool | None = None
    sfx: str = field(default_factory=new_suffix)
    steps: list[Obj] = field(default_factory=list)
    generated: dict[str, str] = field(default_factory=dict)  # name -> "prefix<gen>"
    cleanup: list[tuple[str, str]] = field(default_factory=list)  # (method, path), run in reverse

    # ---- names -----------------------------------------------------------------------------------
    def ns(self, tag: str) -> str:
        return f"fd-{tag}-{self.sfx}"

    def name(self, base: str) -> str:
        """A cluster-scoped name of this run's own."""
        return f"{base}-{self.sfx}"

    # ---- requests --------------------------------------------------------------------------------
    async def raw(self, method: str, path: str, body: Any = None, *, query: dict[str, str] | None = None,
                  ctype: str = "application/json", accept: str | None = None) -> Resp:
        """A request that is not recorded (setup, polling, cleanup)."""
        headers = {"User-Agent": "kubeloop-differential/1.0"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if accept:
            headers["Accept"] = accept
        data: bytes | None = None
        if body is not None:
            data = body if isinstance(body, bytes) else body.encode() if isinstance(body, str) else json.dumps(
                body).encode()
            headers["Content-Type"] = ctype
        async with self.session.request(method, self.url + path, data=data, params=query, headers=headers,
                                        ssl=self.ssl_context) as r:
            text = await r.read()
            ct = r.headers.get("Content-Type", "").split(";")[0].strip()
            try:
                parsed: Any = json.loads(text) if text else None
            except ValueError:
                parsed = text.decode(errors="replace")
            resp = Resp(r.status, ct, r.headers.getall("Warning", []), parsed)
        self._remember(resp.body)
        return resp

    async def req(self, step: str, method: str, path: str, body: Any = None, *, query: dict[str, str] | None = None,
                  ctype: str = "application/json", accept: str | None = None, unordered: bool = False,
                  soft: tuple[str, ...] = ()) -> Resp:
        """A recorded request. `unordered`: a list whose order the real server does not define.
        `soft`: projection keys compared only for presence (e.g. `"message"` where the real text
        varies from run to run), or, as `"message:lines"`, as a set of lines (a list of errors
        the real server writes in Go's map order)."""
        resp = await self.raw(method, path, body, query=query, ctype=ctype, accept=accept)
        self.steps.append({"step": step, **self.project(resp, unordered), **({"soft": list(soft)} if soft else {})})
        return resp

    def fact(self, step: str, value: Any) -> None:
        """A derived fact (a resourceVersion relation, a count), recorded as it is."""
        self.steps.append({"step": step, "fact": value})

    async def wait(self, path: str, check: Callable[[Resp], bool], *, within: float = 30.0) -> Resp:
        """Poll `path` (unrecorded) until `check` holds (up to `within` seconds); the last response."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while True:
            resp = await self.raw("GET", path)
            if check(resp) or loop.time() > deadline:
                return resp
            await asyncio.sleep(0.1)

    def on_cleanup(self, path: str, method: str = "DELETE") -> None:
        self.cleanup.append((method, path))

    async def run_cleanup(self) -> None:
        for method, path in reversed(self.cleanup):
            with contextlib.suppress(Exception):
                await self.raw(method, path)

    @contextlib.asynccontextmanager
    async def watching(self, step: str, path: str, *, query: dict[str, str] | None = None,
                       unordered: bool = False) -> AsyncIterator[Watch]:
        """Open a watch (recorded as one step when the block ends: its events as projected)."""
        headers = {"User-Agent": "kubeloop-differential/1.0"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        params = {"watch": "true", **(query or {})}
        w = Watch()
        async with self.session.get(self.url + path, params=params, headers=headers, ssl=self.ssl_context) as r:
            w.code = r.status
            w.warnings = r.headers.getall("Warning", [])

            async def pump() -> None:
                async for line in r.content:
                    if line.strip():
                        ev = json.loads(line)
                        self._remember(ev.get("object"))
                        if ev.get("type") != "BOOKMARK":
                            w.events.append(ev)
                            w.arrived.set()

            task = asyncio.create_task(pump())
            try:
                yield w
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, aiohttp.ClientError):
                    await task
        events = [{"type": e.get("type"), "object": self.mask(self._object(e.get("object") or {}))} for e in w.events]
        if unordered:
            events.sort(key=lambda e: json.dumps(e, sort_keys=True))
        self.steps.append({"step": step, "code": w.code, "warnings": [self.mask(x) for x in w.warnings],
                           "events": events})

    # ---- projections ------------------------------------------------------------------------------
    def _remember(self, body: Any) -> None:
        """Note the resourceVersions and generated names a response reveals (for masking)."""
        if not isinstance(body, dict):
            return
        meta = body.get("metadata")
        if isinstance(meta, dict):
            gen, name = meta.get("generateName"), meta.get("name")
            if gen and name and str(name).startswith(str(gen)) and name not in self.generated:
                self.generated[str(name)] = f"{gen}<gen>"
        for item in body.get("items") or []:
            self._remember(item)

    def mask(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self.mask(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.mask(v) for v in value]
        if not isinstance(value, str):
            return value
        s = value
        for name, shown in self.generated.items():
            s = s.replace(name, shown)
        s = s.replace(self.sfx, "<sfx>")
        s = _UID.sub("<uid>", s)
        s = _TS.sub("<ts>", s)
        s = _SERVICE_IP.sub("<ip>", s)
        s = _GO_POINTER.sub("<ptr>", s)
        return _RV_IN_TEXT.sub(lambda m: m.group(1) + "<rv>" + (m.group(3) or "") + ("<rv>" if m.group(4) else ""), s)

    def _object(self, obj: Obj) -> Obj:
        out = json.loads(json.dumps(obj))
        meta = out.get("metadata")
        if isinstance(meta, dict):
            for k in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "selfLink"):
                if meta.get(k):
                    meta[k] = f"<{k}>"
            for e in meta.get("managedFields") or []:
                if isinstance(e, dict):
                    e.pop("time", None)
            for ref in meta.get("ownerReferences") or []:
                if isinstance(ref, dict) and ref.get("uid"):
                    ref["uid"] = "<uid>"
        spec = out.get("spec")
        if isinstance(spec, dict):
            if spec.get("clusterIP") not in (None, "", "None"):
                spec["clusterIP"] = "<ip>"
            if isinstance(spec.get("clusterIPs"), list):
                spec["clusterIPs"] = [ip if ip == "None" else "<ip>" for ip in spec["clusterIPs"]]
            for p in spec.get("ports") or []:
                if isinstance(p, dict) and p.get("nodePort"):
                    p["nodePort"] = "<port>"
            if spec.get("healthCheckNodePort"):
                spec["healthCheckNodePort"] = "<port>"
        return out

    def project(self, resp: Resp, unordered: bool = False) -> Obj:
        out: Obj = {"code": resp.code, "ctype": resp.ctype}
        if resp.warnings:
            out["warnings"] = [self.mask(w) for w in resp.warnings]
        body = resp.body
        if isinstance(body, dict) and body.get("kind") == "Status":
            st: Obj = {k: body.get(k) for k in ("status", "reason", "code", "message") if k in body}
            details = body.get("details")
            if isinstance(details, dict):
                d = {k: details[k] for k in ("name", "group", "kind", "retryAfterSeconds") if k in details}
                causes = details.get("causes")
                if isinstance(causes, list):
                    d["causes"] = sorted(({k: c.get(k) for k in ("reason", "field", "message") if k in c}
                                          for c in causes), key=lambda c: json.dumps(c, sort_keys=True))
                if "uid" in details:
                    d["uid"] = "<uid>"
                st["details"] = d
            out["status"] = self.mask(st)
        elif isinstance(body, dict) and isinstance(body.get("items"), list):
            names = [self.mask(str((i.get("metadata") or {}).get("name", ""))) for i in body["items"]]
            lst: Obj = {"kind": body.get("kind"), "apiVersion": body.get("apiVersion"),
                        "names": sorted(names) if unordered else names,
                        "continue": bool((body.get("metadata") or {}).get("continue"))}
            if "remainingItemCount" in (body.get("metadata") or {}):
                lst["remainingItemCount"] = body["metadata"]["remainingItemCount"]
            out["list"] = self.mask(lst)
        elif isinstance(body, dict):
            out["object"] = self.mask(self._object(body))
        elif body is not None:
            out["text"] = self.mask(str(body))
        return out


@dataclass
class Watch:
    code: int = 0
    warnings: list[str] = field(default_factory=list)
    events: list[Obj] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def expect(self, n: int, within: float = 10.0, settle: float = 0.3) -> None:
        """Wait for `n` events (up to `within` seconds; then `settle` more, to catch unexpected ones)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while len(self.events) < n and loop.time() < deadline:
            self.arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.arrived.wait(), deadline - loop.time())
        await asyncio.sleep(settle)


# ---- comparison -----------------------------------------------------------------------------------------
def diff(expected: Any, got: Any, path: str = "") -> list[str]:
    """Where `got` differs from `expected` (paths like `[3:create ds].object.spec.x`)."""
    if isinstance(expected, dict) and isinstance(got, dict):
        out: list[str] = []
        for k in expected.keys() | got.keys():
            if k not in got:
                out.append(f"{path}.{k}: missing (expected {_short(expected[k])})")
            elif k not in expected:
                out.append(f"{path}.{k}: unexpected {_short(got[k])}")
            else:
                out += diff(expected[k], got[k], f"{path}.{k}")
        return out
    if isinstance(expected, list) and isinstance(got, list):
        if len(expected) != len(got):
            return [f"{path}: expected {len(expected)} items {_short(expected)}, got {len(got)} {_short(got)}"]
        out = []
        for i, (a, b) in enumerate(zip(expected, got, strict=True)):
            out += diff(a, b, f"{path}[{i}]")
        return out
    if expected != got or type(expected) is not type(got):
        return [f"{path}: expected {_short(expected)}, got {_short(got)}"]
    return []


def _short(v: Any) -> str:
    s = json.dumps(v, sort_keys=True)
    return s if len(s) < 300 else s[:297] + "..."


def compare_steps(expected: list[Obj], got: list[Obj]) -> list[str]:
    """Step-by-step differences between a recording and a replay (soft keys: presence only)."""
    problems: list[str] = []
    for i, (e, g) in enumerate(zip(expected, got, strict=False)):
        where = f"[{i}:{e.get('step')}]"
        if e.get("step") != g.get("step"):
            problems.append(f"{where}: the replay's step is {g.get('step')!r} (the scenario changed: record it again)")
            break
        if e.get("soft"):
            e, g = copy.deepcopy(e), copy.deepcopy(g)  # the recording itself keeps the full text
        for key in e.get("soft") or ():
            for side in (e, g):
                _drop(side, *key.split(":", 1))
        problems += diff({k: v for k, v in e.items() if k != "soft"}, {k: v for k, v in g.items() if k != "soft"},
                         where)
    if len(expected) != len(got):
        problems.append(f"recorded {len(expected)} steps, replayed {len(got)}")
    return problems


def _drop(step: Obj, key: str, how: str = "") -> None:
    """Blank one projection key wherever it is (a soft key: compared for presence only), or with
    `how="lines"` sort the lines of its text."""
    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k in list(v):
                if k == key:
                    v[k] = sorted(v[k].splitlines()) if how == "lines" and isinstance(v[k], str) else "<soft>"
                else:
                    walk(v[k])
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(step)
