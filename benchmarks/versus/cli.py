"""``python -m benchmarks.versus``: kubeloop's informer against a bare aiohttp + orjson loop and,
with ``--client-go PATH`` (the real-cluster kit's ``informerbench``), client-go's informer; each
run in its own process, interleaved (kubeloop, bare, client-go, kubeloop, ...).

Against the emulator (``kubeloop apiserver --tls`` in its own process) unless ``--kubeconfig`` names a
cluster (objects go to ``versus-*`` namespaces, created if missing and left in place). Measures:

- start -> synced for N ConfigMaps and N Pods, from launching the process (interpreter start and
  imports included: what a user waits for) and in process (after imports);
- memory held, as a ratio to the JSON size of the objects without managedFields: RSS growth over a
  warmed baseline at sync (and its peak, VmHWM) and after the informer's compaction, and the same
  traced (tracemalloc, a separate run), both while the informer is running;
- CPU per watch event at a fixed change rate (informer + one index + one subscriber vs the bare
  watch loop keeping a dict and a label index), from the process's own CPU time; kubeloop's
  subscriber twice: reading in a task of its own, and with a sink (a function called in the
  informer's task, as controllers subscribe and as client-go calls its event handlers);
- import time (``python -c "import ..."`` minus ``python -c pass``);
- client-go's side (benchmarks/versus/client_go.py): start -> synced from launch, its heap and RSS
  held for the objects after sync (after its collector ran), CPU per watch event at the same rate.
- with ``--phases ...,instructions`` (needs valgrind): instructions per watch event, counted by
  callgrind, which repeat where CPU time does not (benchmarks/versus/instructions.py).

Writes JSON (``--out``), an SVG chart beside it and prints the table. ``--scale N ...`` runs the
scale run instead (benchmarks/versus/scale.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from benchmarks.peers import seed
from benchmarks.peers.emulator import Emulator
from benchmarks.peers.runner import compile_sources
from benchmarks.versus import client_go, instructions, objects
from benchmarks.versus.chart import write_chart
from benchmarks.versus.child import COMPRESSION_ENV, LOAD_CHEAP_LIMIT_ENV
from benchmarks.versus.run import ROOT, SIDES, Side, write_and_wait
from kubeloop.client import Client, NotFound
from kubeloop.config import load_kubeconfig

RESULTS = ROOT / "benchmarks" / "results"
KINDS = ("configmaps", "pods")
RESOURCES = {"configmaps": "v1/ConfigMap", "pods": "v1/Pod"}
CHURN_NS = "versus-churn"

IMPORTS = {"kubeloop": "import kubeloop.cache, kubeloop.client",
           "bare": "import aiohttp, orjson, yaml",
           "python": "pass"}


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.versus", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--objects", type=int, default=10_000, help="objects per kind (10000)")
    p.add_argument("--runs", type=int, default=3, help="runs of each measurement per side (3)")
    p.add_argument("--kinds", default=",".join(KINDS), help="kinds for warm-up and memory (configmaps,pods)")
    p.add_argument("--objects-kind", choices=objects.KINDS, default="realistic",
                   help="realistic objects (default) or the peers benchmark's hash-derived ones (random)")
    p.add_argument("--rate", type=float, default=400.0, help="changes/s for CPU per event (400)")
    p.add_argument("--seconds", type=float, default=5.0, help="seconds of changes per CPU run (5)")
    p.add_argument("--keys", type=int, default=200, help="ConfigMaps the writer cycles through (200)")
    p.add_argument("--phases", default="warmup,memory,traced,churn,imports",
                   help="what to measure (default: all but instructions, which needs valgrind: "
                        "warmup,memory,traced,churn,imports,instructions)")
    p.add_argument("--kubeconfig", default=None, help="measure against this cluster instead of the emulator")
    p.add_argument("--client-go", default=os.environ.get("KUBELOOP_INFORMERBENCH"), metavar="PATH",
                   help="client-go's informerbench binary: a third side (default $KUBELOOP_INFORMERBENCH; "
                        "skipped, with a line saying so, when absent)")
    p.add_argument("--scale", type=int, nargs="*", default=None,
                   help="the scale run instead: ConfigMap counts beyond 10000 (e.g. --scale 100000 1000000)")
    p.add_argument("--load-cheap-limit", type=float, default=None, metavar="BYTES",
                   help="kubeloop's Informer.load_cheap_limit (default: the library's, 64 MiB; 0 compresses "
                        "every listed object as it arrives, inf none)")
    p.add_argument("--compression", choices=("auto", "on", "off"), default="auto",
                   help="kubeloop's Client(compression=...): auto (the default: none from a server on this host "
                        "or from inside its cluster), on (gzip, as client-go and the bare loop ask) or off")
    p.add_argument("--profile", type=Path, default=None,
                   help="run every side under cProfile, keep DIR/<side>-<mode>-<kind>.pstats, print the top functions")
    p.add_argument("--out", type=Path, default=None, help="JSON (default benchmarks/results/versus.json, "
                                                          "versus-scale.json for --scale); the SVG goes beside it")
    return p.parse_args(argv)


def per_json(values: list[Any], size: float) -> list[float]:
    """Bytes as a multiple of the JSON size (None values, from runs without tracing, dropped)."""
    return [v / size for v in values if v is not None]


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


# ---------------------------------------------------------------------------------------- objects


async def seed_objects(kubeconfig: str, n: int, kinds: list[str], keys: int,
                       objects_kind: str = "realistic") -> dict[str, str]:
    """Create the objects (idempotent); returns the namespace per kind."""
    namespaces = {kind: objects.namespace(objects_kind, kind, n) for kind in kinds}
    make = objects.makers(objects_kind)
    async with Client(load_kubeconfig(kubeconfig), qps=None, timeout=120) as client:
        for kind, ns in namespaces.items():
            existing = len((await client.list(RESOURCES[kind], namespace=ns)).items) if await exists(client, ns) else 0
            if existing < n:
                await seed.namespace(client, ns)
                if kind == "pods":
                    await default_service_account(client, ns)
                await seed.create_many(client, ns, [make[kind](i) for i in range(n)])
        churn = []
        for i in range(keys):
            cm = seed.configmap(i)
            cm["metadata"]["name"] = f"churn-{i:05d}"
            churn.append(cm)
        await seed.create_many(client, CHURN_NS, churn)
    return namespaces


async def default_service_account(client: Client, ns: str) -> None:
    """Wait (up to a minute) for a new namespace's `default` ServiceAccount (a real cluster's
    controller makes it; until then its admission refuses Pods)."""
    deadline = time.monotonic() + 60.0
    while True:
        try:
            await client.get("v1/ServiceAccount", "default", namespace=ns)
            return
        except NotFound:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


async def exists(client: Client, ns: str) -> bool:
    try:
        await client.get("v1/Namespace", ns)
    except NotFound:
        return False
    return True


async def json_sizes(kubeconfig: str, namespaces: dict[str, str]) -> dict[str, dict[str, float]]:
    """Bytes of the objects' JSON as served, without managedFields (what the ratios divide by)."""
    out = {}
    async with Client(load_kubeconfig(kubeconfig), qps=None, timeout=120) as client:
        for kind, ns in namespaces.items():
            resource = RESOURCES[kind]
            total = full = count = 0
            async for page in client.list_pages(resource, namespace=ns, limit=500):
                for obj in page.items:
                    full += len(orjson.dumps(obj))
                    obj["metadata"].pop("managedFields", None)
                    total += len(orjson.dumps(obj))
                    count += 1
            out[kind] = {"objects": count, "json_bytes": total, "json_bytes_with_managed_fields": full,
                         "bytes_per_object": total / max(1, count)}
    return out


# ---------------------------------------------------------------------------------------- phases


def one_load(side: str, mode: str, kind: str, ns: str, kubeconfig: str, workdir: Path) -> dict[str, Any]:
    """One process: launch, synced, compacted; the figures of that run."""
    with Side(side, mode, kind, ns, kubeconfig, workdir) as s:
        imported = s.expect("imported")
        synced = s.expect("synced", 3600)
        compacted = s.expect("compacted", 3600)
        extra = s.expect("gets", 600) if mode == "scale" else {}
    return {
        "from_launch_s": synced["t_synced"] - s.launched,
        "in_process_s": synced["t_synced"] - imported["t_imported"],
        "list_s": synced["t_synced"] - synced["t0"],
        "module_imports_s": imported["t_imported"] - imported["t_start"],
        "interpreter_start_s": imported["t_start"] - s.launched,
        "objects": synced["objects"],
        "rss_at_sync": synced["rss"], "hwm_at_sync": synced["hwm"],
        "rss_compacted": compacted["rss"], "hwm_compacted": compacted["hwm"],
        "traced_at_sync": synced.get("traced"), "traced_peak": compacted.get("traced_peak"),
        "traced_compacted": compacted.get("traced"),
        **{k: v for k, v in extra.items() if k not in ("event", "t")},
    }


def one_churn(side: str, kubeconfig: str, workdir: Path, a: argparse.Namespace, mode: str = "churn") -> dict[str, Any]:
    """One process: CPU seconds per watch event while a writer changes `keys` ConfigMaps at `rate`."""
    with Side(side, mode, "configmaps", CHURN_NS, kubeconfig, workdir) as s:
        s.expect("ready", 600)
        time.sleep(0.5)
        s.send("mark")
        start = s.expect("mark")
        wrote = write_and_wait(s, kubeconfig, CHURN_NS, a.rate, a.seconds, a.keys, start["events"], wait=60, poll=0.1)
        s.send("mark")
        end = s.expect("mark", 60)
        s.send("quit")
    events = end["events"] - start["events"]
    return {"events": events, "cpu_s": end["cpu"] - start["cpu"], "writes": wrote["writes"],
            "achieved_per_s": wrote["writes"] / wrote["seconds"],
            "us_per_event": (end["cpu"] - start["cpu"]) / max(1, events) * 1e6}


def import_times(runs: int) -> dict[str, list[float]]:
    """Wall seconds of ``python -c <imports>`` per set, interleaved; `python` is the bare interpreter."""
    out: dict[str, list[float]] = {k: [] for k in IMPORTS}
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    for _ in range(runs):
        for name, code in IMPORTS.items():
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT)
            out[name].append(time.perf_counter() - t)
    return out


# ---------------------------------------------------------------------------------------- run


def run(a: argparse.Namespace, kubeconfig: str, workdir: Path) -> dict[str, Any]:
    kinds = [k for k in a.kinds.split(",") if k]
    phases = set(a.phases.split(","))
    compile_sources()
    t = time.perf_counter()
    namespaces = asyncio.run(seed_objects(kubeconfig, a.objects, kinds, a.keys, a.objects_kind))
    sizes = asyncio.run(json_sizes(kubeconfig, namespaces))
    print(f"seeded in {time.perf_counter() - t:.1f}s: " + ", ".join(
        f"{k} {v['objects']} x {v['bytes_per_object']:.0f} B" for k, v in sizes.items()), flush=True)
    go = a.client_go if client_go.available(a.client_go) is None else None
    if go is None:
        print(f"client-go side skipped: {client_go.available(a.client_go)}", flush=True)
    loads: dict[str, dict[str, dict[str, list[Any]]]] = {}

    def keep(kind: str, key: str, r: dict[str, Any]) -> None:
        row = loads.setdefault(kind, {}).setdefault(key, {})
        for k, v in r.items():
            row.setdefault(k, []).append(v)

    for run_no in range(a.runs):
        for kind in kinds:
            for mode in ("warmup", "memory", "traced"):
                if mode not in phases:
                    continue
                for side in SIDES:  # interleaved: kubeloop, bare, client-go, kubeloop, bare, ...
                    r = one_load(side, mode, kind, namespaces[kind], kubeconfig, workdir)
                    keep(kind, f"{side}:{mode}", r)
                    print(f"run {run_no + 1} {kind} {mode:7} {side:9} synced {r['from_launch_s']:.3f}s from launch "
                          f"({r['in_process_s']:.3f}s in process), {r['objects']} objects", flush=True)
                if go is not None and mode == "warmup":
                    r = client_go.one_load(go, kind, namespaces[kind], kubeconfig)
                    keep(kind, "client-go:warmup", r)
                    print(f"run {run_no + 1} {kind} {mode:7} client-go synced {r['from_launch_s']:.3f}s from launch "
                          f"({r['in_process_s']:.3f}s in process, start-up {r['startup_s']:.3f}s), heap "
                          f"{r['heap'] / 2**20:.1f} MiB, RSS {r['rss'] / 2**20:.1f} MiB held, {r['objects']} objects",
                          flush=True)
    churn: dict[str, list[dict[str, Any]]] = {}
    if "churn" in phases:
        for run_no in range(a.runs):
            for side, mode in (("kubeloop", "churn"), ("kubeloop", "churn-sink"), ("bare", "churn")):
                r = one_churn(side, kubeconfig, workdir, a, mode)
                name = side if mode == "churn" else "kubeloop-sink"
                churn.setdefault(name, []).append(r)
                print(f"run {run_no + 1} churn {name:13} {r['us_per_event']:.0f} us/event over {r['events']} events "
                      f"({r['achieved_per_s']:.0f}/s)", flush=True)
            if go is not None:
                r = client_go.one_churn(go, kubeconfig, CHURN_NS, a.rate, a.seconds, a.keys)
                churn.setdefault("client-go", []).append(r)
                print(f"run {run_no + 1} churn client-go {r['us_per_event']:.0f} us/event over {r['events']} events "
                      f"({r['achieved_per_s']:.0f}/s)", flush=True)
    imports = import_times(max(5, a.runs)) if "imports" in phases else {}
    counts: dict[str, dict[str, Any]] = {}
    if "instructions" in phases:
        if not instructions.available():
            raise SystemExit("--phases instructions needs valgrind (and callgrind_control) installed")
        for side in SIDES:  # one run each: the counts repeat to within ~1%
            counts[side] = instructions.one_count(side, kubeconfig, CHURN_NS, workdir)
            print(f"instructions {side:8} {counts[side]['per_event'] / 1e3:.0f}k per event over "
                  f"{counts[side]['events']} events ({instructions.RATE:.0f}/s)", flush=True)
    return {"sizes": sizes, "loads": loads, "churn": churn, "imports": imports, "instructions": counts,
            "client_go": client_go.binary_info(go) if go is not None else None}


def summarize(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """The table: one row per metric, each side's median (and range), kubeloop's ratio to the bare
    loop and to client-go, and issue 32's target (on the ratio to client-go)."""
    rows: list[dict[str, Any]] = []

    def add(metric: str, unit: str, kl: list[float], bare: list[float] | None, cg: list[float] | None,
            target: str = "", limit: float | None = None) -> None:
        k = med(kl)
        b = med(bare) if bare else None
        c = med(cg) if cg else None
        vs_go = k / c if c else None
        rows.append({"metric": metric, "unit": unit, "kubeloop": k, "bare": b, "client_go": c,
                     "kubeloop_range": [min(kl), max(kl)] if kl else None,
                     "bare_range": [min(bare), max(bare)] if bare else None,
                     "client_go_range": [min(cg), max(cg)] if cg else None,
                     "vs_bare": k / b if b else None, "vs_client_go": vs_go,
                     "target": target if c else "",
                     "met": (vs_go <= limit) if (vs_go is not None and limit is not None) else None})

    for kind, by in raw["loads"].items():
        size = raw["sizes"][kind]["json_bytes"]
        w_k, w_b, w_c = by.get("kubeloop:warmup"), by.get("bare:warmup"), by.get("client-go:warmup")
        if w_k and w_b:
            add(f"start -> synced, {kind}, from launch", "s", w_k["from_launch_s"], w_b["from_launch_s"],
                w_c["from_launch_s"] if w_c else None, "<= 1.0x client-go", 1.0)
            add(f"start -> synced, {kind}, in process", "s", w_k["in_process_s"], w_b["in_process_s"],
                w_c["in_process_s"] if w_c else None, "(after imports / client made)")
        m_k, m_b = by.get("kubeloop:memory"), by.get("bare:memory")
        if m_k and m_b:
            heap = per_json(w_c["heap"], size) if w_c else None
            add(f"held at sync / JSON, {kind} (RSS; client-go: heap)", "x JSON", per_json(m_k["rss_at_sync"], size),
                per_json(m_b["rss_at_sync"], size), heap, "<= 0.5x client-go heap", 0.5)
            add(f"held after compaction / JSON, {kind} (RSS; client-go: heap)", "x JSON",
                per_json(m_k["rss_compacted"], size), per_json(m_b["rss_compacted"], size), heap,
                "<= 0.2x client-go heap", 0.2)
            add(f"RSS after compaction / JSON, {kind} (client-go: RSS)", "x JSON", per_json(m_k["rss_compacted"], size),
                per_json(m_b["rss_compacted"], size), per_json(w_c["rss"], size) if w_c else None, "(RSS against RSS)")
            add(f"RSS peak (VmHWM) at sync / JSON, {kind}", "x JSON", per_json(m_k["hwm_at_sync"], size),
                per_json(m_b["hwm_at_sync"], size), None)
        t_k, t_b = by.get("kubeloop:traced"), by.get("bare:traced")
        if t_k and t_b:
            add(f"traced at sync / JSON, {kind}", "x JSON", per_json(t_k["traced_at_sync"], size),
                per_json(t_b["traced_at_sync"], size), None)
            add(f"traced peak / JSON, {kind}", "x JSON", per_json(t_k["traced_peak"], size),
                per_json(t_b["traced_peak"], size), None)
            add(f"traced after compaction / JSON, {kind}", "x JSON", per_json(t_k["traced_compacted"], size),
                per_json(t_b["traced_compacted"], size), None)
    if raw["churn"]:
        cg_churn = raw["churn"].get("client-go")
        cg = [r["us_per_event"] for r in cg_churn] if cg_churn else None
        bare = [r["us_per_event"] for r in raw["churn"]["bare"]]
        if raw["churn"].get("kubeloop-sink"):  # like client-go's handler: a function called per event
            add("CPU per watch event, configmaps (subscriber's sink)", "us",
                [r["us_per_event"] for r in raw["churn"]["kubeloop-sink"]], bare, cg, "<= 0.8x client-go", 0.8)
        add("CPU per watch event, configmaps (subscriber's own task)", "us",
            [r["us_per_event"] for r in raw["churn"]["kubeloop"]], bare, cg, "(a task per subscriber)")
    if raw.get("instructions"):
        add("instructions per watch event, configmaps (callgrind)", "k", [raw["instructions"]["kubeloop"]["per_event"] / 1e3],
            [raw["instructions"]["bare"]["per_event"] / 1e3], None)
    if raw["imports"]:
        py = med(raw["imports"]["python"])
        add("import time (interpreter start subtracted)", "s", [x - py for x in raw["imports"]["kubeloop"]],
            [x - py for x in raw["imports"]["bare"]], None, "(aiohttp + orjson + PyYAML)")
    return rows


def fmt(v: float | None, unit: str) -> str:
    if v is None:
        return "-"
    if unit == "s":
        return f"{v:.3f}"
    if unit in ("us", "k"):
        return f"{v:.0f}"
    return f"{v:.2f}"


def _range(r: list[float] | None, unit: str) -> str:
    return "" if not r or r[0] == r[1] else f" ({fmt(r[0], unit)}-{fmt(r[1], unit)})"


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown: medians with their ranges, the ratios, the target on the ratio to client-go."""
    lines = ["| metric | kubeloop | bare loop | client-go | kubeloop / bare | kubeloop / client-go | target | met |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        unit = r["unit"]
        met = "" if r["met"] is None else ("yes" if r["met"] else "NO")
        vs_b = "-" if r["vs_bare"] is None else f"{r['vs_bare']:.2f}x"
        vs_c = "-" if r["vs_client_go"] is None else f"{r['vs_client_go']:.2f}x"
        lines.append(f"| {r['metric']} ({unit}) | {fmt(r['kubeloop'], unit)}{_range(r['kubeloop_range'], unit)} | "
                     f"{fmt(r['bare'], unit)}{_range(r['bare_range'], unit)} | "
                     f"{fmt(r['client_go'], unit)}{_range(r['client_go_range'], unit)} | {vs_b} | {vs_c} | "
                     f"{r['target']} | {met} |")
    return "\n".join(lines)


def print_profiles(directory: Path, top: int = 25) -> None:
    """The functions with the most own time (tottime) in each profile, and their callers' totals."""
    import pstats

    for path in sorted(directory.glob("*.pstats")):
        print(f"\n=== {path.stem}")
        pstats.Stats(str(path)).sort_stats("tottime").print_stats(top)


def environment() -> dict[str, Any]:
    import aiohttp

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "kubeloop"], cwd=ROOT, capture_output=True,
                           text=True)
    return {"commit": commit.stdout.strip() + ("+dirty" if dirty.stdout.strip() else ""),
            "python": platform.python_version(), "aiohttp": aiohttp.__version__, "orjson": orjson.__version__,
            "cpus": os.cpu_count(), "load_average": list(os.getloadavg()),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    if a.load_cheap_limit is not None:  # read by kubeloop's side (each side inherits the environment)
        os.environ[LOAD_CHEAP_LIMIT_ENV] = repr(a.load_cheap_limit)
    os.environ[COMPRESSION_ENV] = a.compression
    if a.scale is not None:
        from benchmarks.versus.scale import main as scale_main
        return scale_main(a)
    out: Path = a.out or RESULTS / "versus.json"
    if a.profile is not None:
        from benchmarks.versus import run as run_module
        a.profile.mkdir(parents=True, exist_ok=True)
        run_module.PROFILE_DIR = a.profile.resolve()
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="kl-versus-") as tmp:
        workdir = Path(tmp)
        if a.kubeconfig:
            raw = run(a, a.kubeconfig, workdir)
            server = "cluster"
        else:
            with Emulator(workdir, tls=True) as emu:  # HTTPS, as a real server
                raw = run(a, emu.kubeconfig, workdir)
            server = "emulator"
    rows = summarize(raw)
    env = environment()
    result: dict[str, Any] = {"command": "python -m benchmarks.versus " + " ".join(sys.argv[1:] if argv is None else argv),
              "server": server, "settings": {k: v for k, v in vars(a).items() if k != "out"} | {"out": str(out)},
              "environment": env, "minutes": (time.time() - started) / 60, "table": rows, "raw": raw}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str) + "\n")
    chart = out.with_suffix(".svg")
    sides = "bare aiohttp+orjson loop" + (" and client-go" if raw.get("client_go") else "")
    write_chart(chart, rows, title=f"kubeloop vs {sides} ({server}, N={a.objects}, "
                                   f"medians of {a.runs} runs, {env['date']})")
    print()
    print(table(rows))
    print(f"\nwrote {out} and {chart} ({result['minutes']:.1f} min)")
    if a.profile is not None:
        print_profiles(a.profile)
    return 0
