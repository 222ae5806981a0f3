"""The kopf side of the peer benchmarks, run the way kopf documents it:

    KUBECONFIG=... PEERS_MODE=warmup ... kopf run --standalone --namespace NS kopf_operator.py

It runs in kopf's own virtual environment (only kopf and its dependencies: no kubeloop, no
orjson), so it is self-contained. Settings come from environment variables (PEERS_*); it reports
by appending JSON lines to the file named by PEERS_REPORT (the parent polls that file).

Modes:
  warmup  ``@kopf.index`` by a label value (the whole body stored); an ``@kopf.on.event``
          handler receives the index and reports when it holds PEERS_N objects.
  idle    nothing to index (an empty namespace): reports once started (memory baseline).
  churn   ``@kopf.on.event``: a trivial handler computing the lag from the writer's timestamp.
  multi   PEERS_CONTROLLERS ``@kopf.on.event`` handlers on the same kind.
  storm   parent ConfigMaps own a child Secret, applied server-side by the parent's handlers
          (``on.resume``/``on.create``/``on.update``) and a ``@kopf.timer`` every PEERS_RESYNC s,
          kopf's documented way to reconcile level-based.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import aiohttp
import kopf
import yaml

T0 = time.time()
MODE = os.environ["PEERS_MODE"]
KIND = os.environ.get("PEERS_KIND", "configmaps")
N = int(os.environ.get("PEERS_N", "0"))
REPORT = os.environ["PEERS_REPORT"]
CONTROLLERS = int(os.environ.get("PEERS_CONTROLLERS", "5"))
RESYNC = float(os.environ.get("PEERS_RESYNC", "10"))
LABEL = "peers/group"
STAMP = "peers/t"


def report(event: str, **fields: Any) -> None:
    with open(REPORT, "a") as f:
        f.write(json.dumps({"event": event, "t": time.time(), "t0": T0, **fields}) + "\n")


@kopf.on.startup()
async def startup(settings: kopf.OperatorSettings, **_: Any) -> None:
    report("started")


# ---------------------------------------------------------------- warm-up

if MODE == "warmup":
    state = {"done": False}

    @kopf.index(KIND)
    def by_group(body: kopf.Body, labels: kopf.Labels, **_: Any) -> dict[str, Any] | None:
        group = labels.get(LABEL)
        return {group: dict(body)} if group is not None else None

    @kopf.on.event(KIND)
    def check(by_group: kopf.Index, **_: Any) -> None:
        if state["done"]:
            return
        held = sum(len(store) for store in by_group.values())
        if held >= N:
            state["done"] = True
            report("ready", held=held)


# ---------------------------------------------------------------- churn

if MODE == "churn":
    lags: list[float] = []
    calls = {"n": 0}

    @kopf.on.event(KIND)
    def on_change(meta: kopf.Meta, **_: Any) -> None:
        stamp = meta.annotations.get(STAMP)
        if stamp is not None and float(stamp) >= T0:  # not a stamp left by an earlier run
            calls["n"] += 1
            lags.append(time.time() - float(stamp))

    @kopf.on.cleanup()
    async def dump(**_: Any) -> None:
        report("final", calls=calls["n"], lags=lags)


# ---------------------------------------------------------------- many handlers on one kind

if MODE == "multi":
    seen: list[set[str]] = [set() for _ in range(CONTROLLERS)]
    multi_state = {"done": False}

    def make_handler(i: int) -> None:
        @kopf.on.event(KIND, id=f"handler{i}")
        def handler(name: str, **_: Any) -> None:
            seen[i].add(name)
            if not multi_state["done"] and all(len(s) >= N for s in seen):
                multi_state["done"] = True
                report("ready", handlers=CONTROLLERS)

    for _i in range(CONTROLLERS):
        make_handler(_i)


# ---------------------------------------------------------------- parent/child storm

if MODE == "storm":
    # kopf has no API client for arbitrary writes: the handler sends the apply PATCH with aiohttp
    # (kopf's own HTTP dependency), to the server of the kubeconfig kopf itself logged in with.
    _session: dict[str, Any] = {}
    applies = {"n": 0}

    def _server() -> str:
        with open(os.environ["KUBECONFIG"]) as f:
            cfg = yaml.safe_load(f)
        return str(cfg["clusters"][0]["cluster"]["server"]).rstrip("/")

    async def apply_child(body: kopf.Body) -> None:
        child: dict[str, Any] = {"apiVersion": "v1", "kind": "Secret",
                 "metadata": {"name": f"{body.metadata.name}-child", "labels": {"peers/child": "1"}},
                 "stringData": {"size": str((body.get("data") or {}).get("size", "1"))}}
        kopf.adopt(child, owner=body)
        if "http" not in _session:
            _session["http"] = aiohttp.ClientSession()
            _session["server"] = _server()
        ns, name = child["metadata"]["namespace"], child["metadata"]["name"]
        url = f"{_session['server']}/api/v1/namespaces/{ns}/secrets/{name}"
        async with _session["http"].patch(
                url, params={"fieldManager": "kopf-peers", "force": "true"}, data=json.dumps(child),
                headers={"Content-Type": "application/apply-patch+yaml"}) as resp:
            await resp.read()
            resp.raise_for_status()
        applies["n"] += 1

    @kopf.on.resume("configmaps", labels={"peers/role": "parent"})
    @kopf.on.create("configmaps", labels={"peers/role": "parent"})
    @kopf.on.update("configmaps", labels={"peers/role": "parent"})
    async def reconcile(body: kopf.Body, **_: Any) -> None:
        await apply_child(body)

    @kopf.timer("configmaps", labels={"peers/role": "parent"}, interval=RESYNC)
    async def resync(body: kopf.Body, **_: Any) -> None:
        await apply_child(body)

    @kopf.on.cleanup()
    async def close(**_: Any) -> None:
        report("final", applies=applies["n"])
        if "http" in _session:
            await _session["http"].close()
