"""The four scenarios, each run one framework after another against the same emulator.

Every function returns plain dicts (they go into the JSON file as they are)."""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from benchmarks.peers.emulator import Emulator, request_delta, writes
from benchmarks.peers.runner import ROOT, Operator
from kubeloop.client import Client
from kubeloop.config import load_kubeconfig

MiB = 1024 * 1024


def pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))]


def ms(x: float | None) -> float | None:
    return None if x is None else round(x * 1e3, 2)


async def _client_do(kubeconfig: str, fn: Any) -> Any:
    async with Client(load_kubeconfig(kubeconfig), qps=None, timeout=60) as client:
        return await fn(client)


def with_client(kubeconfig: str, fn: Any) -> Any:
    """Run ``await fn(client)`` on a fresh kubeloop client (seeding, checks): the parent's own work."""
    return asyncio.run(_client_do(kubeconfig, fn))


def json_bytes(kubeconfig: str, kind: str, namespace: str) -> tuple[int, int]:
    """(objects, total JSON bytes as the server sends them) in `namespace`."""
    async def fn(client: Client) -> tuple[int, int]:
        items = await client.list(f"v1/{kind}", namespace=namespace)
        return len(items), sum(len(orjson.dumps(o)) for o in items)
    result: tuple[int, int] = with_client(kubeconfig, fn)
    return result


# ---------------------------------------------------------------- 1. warm-up


def idle_memory(emu: Emulator, workdir: Path, framework: str, kopf: Path | None, kind: str,
                namespace: str) -> float:
    """RSS (MiB) of the framework's operator started against an empty namespace: its baseline."""
    with Operator(framework, "idle", namespace=namespace, kubeconfig=emu.kubeconfig, workdir=workdir, kopf=kopf,
                  kind=kind) as op:
        op.wait_for("started" if framework == "kopf" else "ready", 120)
        time.sleep(1.0)
        rss = op.memory().rss_mb
        op.stop()
    return rss


def warmup(emu: Emulator, workdir: Path, framework: str, kopf: Path | None, kind: str, namespace: str, n: int,
           idle_rss_mb: float, timeout: float) -> dict[str, Any]:
    """Time from launch until all `n` objects are held and indexed; memory per object over idle."""
    with Operator(framework, "warmup", namespace=namespace, kubeconfig=emu.kubeconfig, workdir=workdir, kopf=kopf,
                  kind=kind, n=n) as op:
        ready = op.wait_for("ready", timeout)
        mem = op.memory()
        cpu = op.cpu()
        op.stop()
    held = int(ready.get("held", 0))
    if held < n:
        raise RuntimeError(f"{framework} warm-up: {held} of {n} objects indexed")
    return {"framework": framework, "kind": kind, "objects": n,
            "seconds": round(ready["t"] - op.launched, 3),  # from launch: interpreter and imports included
            "seconds_in_process": round(ready["t"] - ready["t0"], 3),  # from the operator module's import
            "cpu_seconds": round(cpu, 3), "rss_mb": round(mem.rss_mb, 1), "peak_rss_mb": round(mem.peak_rss_mb, 1),
            "idle_rss_mb": round(idle_rss_mb, 1),
            "bytes_per_object": round((mem.rss_mb - idle_rss_mb) * MiB / n) if n else None}


def warmup_repeated(repeat: int, *args: Any) -> dict[str, Any]:
    """`warmup` run `repeat` times: each figure is the median of the runs; every time is kept."""
    runs = [warmup(*args) for _ in range(max(1, repeat))]
    row = dict(runs[0])
    for key, value in runs[0].items():
        if isinstance(value, (int, float)) and key != "objects":
            med = statistics.median(r[key] for r in runs)
            row[key] = round(med) if key == "bytes_per_object" else round(med, 3)
    row["repeats"] = len(runs)
    row["seconds_runs"] = [r["seconds"] for r in runs]
    row["seconds_in_process_runs"] = [r["seconds_in_process"] for r in runs]
    return row


# ---------------------------------------------------------------- 2. churn


def churn(emu: Emulator, workdir: Path, framework: str, kopf: Path | None, namespace: str, keys: int,
          rate: float, seconds: float, concurrency: int) -> dict[str, Any]:
    """`rate` merge patches/s for `seconds` over `keys` ConfigMaps, a trivial handler per change."""
    with Operator(framework, "churn", namespace=namespace, kubeconfig=emu.kubeconfig, workdir=workdir,
                  kopf=kopf) as op:
        op.wait_for("started" if framework == "kopf" else "ready", 120)
        time.sleep(3.0)  # the initial list handled (kopf: one event per object)
        cpu0, before = op.cpu(), emu.stats()
        w = write_churn(emu, namespace, keys, rate, seconds, concurrency)
        time.sleep(1.0)  # the last changes arrive
        cpu, mem = op.cpu() - cpu0, op.memory()
        delta = request_delta(before, emu.stats())
        final = op.stop(final=True)
    assert final is not None
    lags: list[float] = final["lags"]
    calls = int(final["calls"])
    return {"framework": framework, "target_rate": rate, "seconds": round(w["seconds"], 2), "writes": w["writes"],
            "write_errors": w["errors"], "achieved_rate": round(w["writes"] / w["seconds"], 1),
            "handler_calls": calls, "handler_calls_per_second": round(calls / w["seconds"], 1),
            "lag_p50_ms": ms(pct(lags, 50)), "lag_p99_ms": ms(pct(lags, 99)), "lag_max_ms": ms(max(lags, default=None)),
            "lag_mean_ms": ms(statistics.fmean(lags)) if lags else None,
            "cpu_seconds": round(cpu, 3), "cpu_us_per_change": round(cpu / max(w["writes"], 1) * 1e6, 1),
            "cpu_us_per_handler_call": round(cpu / max(calls, 1) * 1e6, 1),
            "peak_rss_mb": round(mem.peak_rss_mb, 1), "rss_mb": round(mem.rss_mb, 1),
            "server_writes_by_operator": sum(writes(delta).values()) - w["writes"]}


def write_churn(emu: Emulator, namespace: str, keys: int, rate: float, seconds: float,
                concurrency: int) -> dict[str, Any]:
    """Run the writer process; its summary (writes, seconds, errors)."""
    out = subprocess.run([sys.executable, "-m", "benchmarks.peers.writer", emu.kubeconfig, namespace,
                          str(rate), str(seconds), str(keys), str(concurrency)],
                         cwd=ROOT, check=True, capture_output=True, text=True)
    data: dict[str, Any] = orjson.loads(out.stdout.strip().splitlines()[-1])
    return data


# ---------------------------------------------------------------- 3. many controllers, one kind


def multi(emu: Emulator, workdir: Path, framework: str, kopf: Path | None, namespace: str, n: int,
          controllers: int, timeout: float) -> dict[str, Any]:
    """`controllers` controllers/handlers on ConfigMaps in one process: watches opened, memory."""
    before = emu.stats()
    with Operator(framework, "multi", namespace=namespace, kubeconfig=emu.kubeconfig, workdir=workdir, kopf=kopf,
                  n=n, controllers=controllers) as op:
        ready = op.wait_for("ready", timeout)
        time.sleep(1.0)
        stats = emu.stats()
        mem = op.memory()
        op.stop()
    key = "core/v1/configmaps"
    watches_open = stats["open_watches"].get(key, 0) - before["open_watches"].get(key, 0)
    delta = request_delta(before, stats)
    return {"framework": framework, "controllers": controllers, "objects": n,
            "open_watches": watches_open, "watch_requests": delta.get(f"watch {key}", 0),
            "list_requests": delta.get(f"list {key}", 0),
            "seconds_to_all_handled": round(ready["t"] - op.launched, 2),
            "rss_mb": round(mem.rss_mb, 1), "peak_rss_mb": round(mem.peak_rss_mb, 1)}


# ---------------------------------------------------------------- 4. reconcile storm


def storm(emu: Emulator, workdir: Path, framework: str, kopf: Path | None, namespace: str, parents: int,
          window: float, resync: float) -> dict[str, Any]:
    """Parents owning one applied child each; writes made in a steady window of `window` seconds."""
    async def count_children(client: Client) -> int:
        return len(await client.list("v1/Secret", namespace=namespace, label_selector="peers/child=1"))

    with Operator(framework, "storm", namespace=namespace, kubeconfig=emu.kubeconfig, workdir=workdir, kopf=kopf,
                  resync=resync) as op:
        op.wait_for("started" if framework == "kopf" else "ready", 120)
        deadline = time.monotonic() + 120
        while with_client(emu.kubeconfig, count_children) < parents:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{framework} storm: the children were not all created")
            time.sleep(0.5)
        time.sleep(max(2.0, resync))  # settle: the start-up handlers are done
        before = emu.stats()
        time.sleep(window)
        delta = request_delta(before, emu.stats())
        final = op.stop(final=True)
    w = writes(delta)
    return {"framework": framework, "parents": parents, "window_seconds": window, "resync_seconds": resync,
            "steady_writes": sum(w.values()), "writes_by_resource": dict(w),
            "requests_in_window": sum(delta.values()), "child_applies_reported": (final or {}).get("applies")}
