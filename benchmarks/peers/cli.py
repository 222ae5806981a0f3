"""``python -m benchmarks.peers``: kubeloop against kopf and a bare aiohttp+orjson loop, on one
emulator, one scenario and one framework after another. See docs/benchmarks.md."""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks.peers import kopf_env, report, scenarios, seed
from benchmarks.peers.emulator import Emulator
from benchmarks.peers.runner import compile_sources
from benchmarks.peers.writer import name as churn_name
from kubeloop.client import Client

RESULTS = Path(__file__).resolve().parent.parent / "results"


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.peers", description=__doc__)
    p.add_argument("--objects", type=int, default=10_000, help="objects per kind for kubeloop and bare (10000)")
    p.add_argument("--kopf-objects", type=int, default=2_000,
                   help="objects per kind for kopf's warm-up, which is quadratic (2000); kubeloop and bare "
                        "are measured at this N too")
    p.add_argument("--kopf-scaling", default="",
                   help="extra N (comma-separated) for kopf's and kubeloop's ConfigMap warm-up, to fit how kopf's "
                        "time grows and extrapolate it (labelled as such) to --objects (default: none)")
    p.add_argument("--repeat", type=int, default=3,
                   help="warm-up runs per row for kubeloop and bare, median reported (3)")
    p.add_argument("--kopf-repeat", type=int, default=1, help="warm-up runs per row for kopf (1)")
    p.add_argument("--kinds", default="configmaps,pods", help="kinds for the warm-up (configmaps,pods)")
    p.add_argument("--churn-rate", type=float, default=500.0, help="changes/s in the churn scenario (500)")
    p.add_argument("--churn-seconds", type=float, default=60.0, help="churn duration (60)")
    p.add_argument("--churn-keys", type=int, default=200, help="ConfigMaps the writer cycles through (200)")
    p.add_argument("--churn-concurrency", type=int, default=32, help="writer requests in flight (32)")
    p.add_argument("--controllers", type=int, default=5, help="controllers/handlers on one kind (5)")
    p.add_argument("--parents", type=int, default=50, help="parents in the storm scenario (50)")
    p.add_argument("--storm-seconds", type=float, default=30.0, help="steady-state window (30)")
    p.add_argument("--resync", type=float, default=10.0,
                   help="seconds between periodic reconciles in the storm scenario (kopf timer, kubeloop "
                        "requeue_after) (10)")
    p.add_argument("--frameworks", default="kubeloop,kopf,bare", help="which to run (kubeloop,kopf,bare; add kubeloop-dict for kubeloop with a "
                        "plain-dict cache in warm-up and churn)")
    p.add_argument("--scenarios", default="warmup,churn,multi,storm", help="which to run")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds one warm-up may take (1800)")
    p.add_argument("--quick", action="store_true",
                   help="CI smoke test: small N, a few seconds each; fails only if a scenario errors")
    p.add_argument("--out", type=Path, default=RESULTS / "peers.json")
    p.add_argument("--markdown", type=Path, default=None, help="default: --out with .md")
    p.add_argument("--chart", type=Path, default=None, help="default: --out with .png")
    a = p.parse_args(argv)
    if a.quick:
        a.objects, a.kopf_objects = min(a.objects, 200), min(a.kopf_objects, 200)
        a.churn_rate, a.churn_seconds, a.churn_keys = min(a.churn_rate, 100.0), min(a.churn_seconds, 3.0), 20
        a.parents, a.storm_seconds, a.resync = min(a.parents, 5), min(a.storm_seconds, 3.0), min(a.resync, 1.0)
        a.timeout = min(a.timeout, 120.0)
        a.repeat = a.kopf_repeat = 1
    a.scaling = [int(x) for x in a.kopf_scaling.split(",") if x]
    a.markdown = a.markdown or a.out.with_suffix(".md")
    a.chart = a.chart or a.out.with_suffix(".png")
    return a


def git_state() -> dict[str, Any]:
    """The commit measured, and how many kubeloop/ files differed from it (a shared working tree)."""
    import subprocess

    root = Path(__file__).resolve().parent.parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "kubeloop"], cwd=root, capture_output=True,
                               text=True).stdout.splitlines()
    except OSError:
        return {}
    return {"commit": head, "kubeloop_files_modified": len(dirty)}


def versions(kopf_versions: dict[str, str] | None) -> dict[str, Any]:
    v: dict[str, Any] = {"python": platform.python_version(), "kubeloop_git": git_state()}
    for pkg in ("kubeloop", "aiohttp", "orjson", "matplotlib"):
        try:
            v[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            v[pkg] = None
    if kopf_versions is not None:
        v["kopf"] = kopf_versions["kopf"]
        v["kopf_venv"] = {"python": kopf_versions["python"], "aiohttp": kopf_versions["aiohttp"]}
    return v


def seed_all(kubeconfig: str, a: argparse.Namespace, kinds: list[str]) -> None:
    builders = {"configmaps": seed.configmap, "pods": seed.pod}

    async def fn(client: Client) -> None:
        await seed.namespace(client, "peers-empty")
        for kind in kinds:
            await seed.create_many(client, "peers-small", [builders[kind](i) for i in range(a.kopf_objects)])
            if a.objects != a.kopf_objects:
                await seed.create_many(client, "peers-big", [builders[kind](i) for i in range(a.objects)])
        for n in a.scaling:
            await seed.create_many(client, f"peers-scale-{n}", [seed.configmap(i) for i in range(n)])
        await seed.create_many(client, "peers-churn", [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": churn_name(i)}, "data": {"k": "v"}}
            for i in range(a.churn_keys)])
        for fw in ("kubeloop", "kopf"):
            await seed.create_many(client, f"peers-storm-{fw}", [
                {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": f"parent-{i:04d}", "labels": {"peers/role": "parent"}},
                 "data": {"size": str(i % 5 + 1)}} for i in range(a.parents)])

    scenarios.with_client(kubeconfig, fn)


def log(msg: str) -> None:
    print(f"[{datetime.now(UTC):%H:%M:%S}] {msg}", file=sys.stderr, flush=True)


def run(a: argparse.Namespace) -> dict[str, Any]:
    frameworks = [f for f in a.frameworks.split(",") if f]
    chosen = [s for s in a.scenarios.split(",") if s]
    kinds = [k for k in a.kinds.split(",") if k]
    kopf = kopf_env.ensure() if "kopf" in frameworks else None
    compile_sources()
    result: dict[str, Any] = {
        "benchmark": "peers", "command": " ".join(["python -m benchmarks.peers", *sys.argv[1:]]),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cpus",
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "versions": versions(kopf_env.versions() if kopf else None),
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()},
        "warmup": [], "churn": [], "multi": [], "storm": [], "json_size": {},
    }
    with tempfile.TemporaryDirectory(prefix="peers-") as tmp, Emulator(Path(tmp)) as emu:
        work = Path(tmp)
        t = time.monotonic()
        seed_all(emu.kubeconfig, a, kinds)
        log(f"seeded in {time.monotonic() - t:.1f}s")
        try:
            if "warmup" in chosen:
                for kind in kinds:
                    n_objects, size = scenarios.json_bytes(emu.kubeconfig, kind, "peers-small")
                    result["json_size"][kind] = {"bytes_per_object": round(size / max(n_objects, 1))}
                    idle = {fw: scenarios.idle_memory(emu, work, fw, kopf, kind, "peers-empty") for fw in frameworks}
                    plan = [(fw, "peers-small", a.kopf_objects) for fw in frameworks]
                    if a.objects != a.kopf_objects:
                        plan += [(fw, "peers-big", a.objects) for fw in frameworks if fw != "kopf"]
                    for fw, ns, n in plan:
                        row = scenarios.warmup_repeated(a.kopf_repeat if fw == "kopf" else a.repeat,
                                                        emu, work, fw, kopf, kind, ns, n, idle[fw], a.timeout)
                        log(f"warmup {kind} {fw} N={n}: {row['seconds']}s, {row['bytes_per_object']} B/object")
                        result["warmup"].append(row)
                if a.scaling and "configmaps" in kinds:
                    idle = {fw: scenarios.idle_memory(emu, work, fw, kopf, "configmaps", "peers-empty")
                            for fw in frameworks if fw in ("kubeloop", "kopf")}
                    for n in a.scaling:
                        for fw in idle:
                            row = scenarios.warmup_repeated(a.kopf_repeat if fw == "kopf" else a.repeat, emu, work,
                                                            fw, kopf, "configmaps", f"peers-scale-{n}", n, idle[fw],
                                                            a.timeout)
                            row["scaling"] = True
                            log(f"scaling configmaps {fw} N={n}: {row['seconds']}s")
                            result["warmup"].append(row)
            if "churn" in chosen:
                # Unmeasured writes first: they fill the emulator's change history, so that its growth
                # (and the garbage collections it triggers in the server) does not fall on whichever
                # framework is measured first.
                scenarios.write_churn(emu, "peers-churn", a.churn_keys, a.churn_rate, min(a.churn_seconds, 20.0),
                                      a.churn_concurrency)
                for fw in frameworks:
                    row = scenarios.churn(emu, work, fw, kopf, "peers-churn", a.churn_keys, a.churn_rate,
                                          a.churn_seconds, a.churn_concurrency)
                    log(f"churn {fw}: {row['achieved_rate']}/s, p99 {row['lag_p99_ms']} ms, "
                        f"{row['cpu_us_per_change']} us CPU/change")
                    result["churn"].append(row)
            if "multi" in chosen:
                for fw in frameworks:
                    if fw not in ("kubeloop", "kopf"):
                        continue
                    row = scenarios.multi(emu, work, fw, kopf, "peers-small", a.kopf_objects, a.controllers,
                                          a.timeout)
                    log(f"multi {fw}: {row['open_watches']} watches, {row['rss_mb']} MB")
                    result["multi"].append(row)
            if "storm" in chosen:
                for fw in frameworks:
                    if fw not in ("kubeloop", "kopf"):
                        continue
                    row = scenarios.storm(emu, work, fw, kopf, f"peers-storm-{fw}", a.parents, a.storm_seconds,
                                          a.resync)
                    log(f"storm {fw}: {row['steady_writes']} writes in {a.storm_seconds}s")
                    result["storm"].append(row)
        finally:
            result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return result


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    result = run(a)
    result["ratios"] = report.ratios(result)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, indent=2) + "\n")
    table = report.markdown(result)
    a.markdown.write_text(table)
    report.chart(result, a.chart)
    print(table)
    return 0
