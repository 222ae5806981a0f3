"""Controller runtime: no-op reconciles/s, change-to-reconcile latency, CPU per reconcile.

Scenarios:
  noop        requests enqueued by hand (distinct keys) through the controller's queue and
              workers to a reconcile that does nothing: the runtime's own overhead per
              reconcile (queue, metrics, context, logger, read-your-writes check), with 1 and 8
              workers; wall time and CPU time per reconcile.
  parent_child  the tests' Widget controller (ConfigMap + Deployment children by server-side
              apply, a finalizer, status by apply or by a merge patch guarded by the cached
              resourceVersion), no predicate on the primary, with and without read your writes: reconciles per widget, Conflict errors, controller writes, writes in
              steady state (one enqueue per widget), own watch events skipped.
  latency     the emulator runs in its own process (``kubeloop apiserver``), a writer process
              patches ConfigMaps at a fixed rate over HTTP with a send timestamp in the data,
              and the controller (this process) records ``now - timestamp`` when the reconcile
              of that change starts: the whole path (API write, watch, informer, predicates,
              queue, worker). Also reported: the rate actually achieved, a bare watch loop in
              this process on the same objects (what the API path alone costs: "watch"), the
              runtime's own share (change reaching the controller's subscription -> reconcile
              start: "runtime"), and this process's CPU per reconcile (watch decoding and
              informer included; the bare baseline watch too unless --no-baseline).

    .venv/bin/python benchmarks/controller_bench.py [--noop-items N] [--rates 100,1000]
                                                    [--duration S] [--keys K] [--widgets N]
                                                    [--scenarios noop,parent_child,latency]

Writes benchmarks/results/controller.json and prints a short table. Defaults are small (the
machine is shared); raise ``--noop-items`` / ``--duration`` for steadier figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from kubeloop.cache import Event, SharedCache
from kubeloop.client import Client
from kubeloop.config import load_kubeconfig
from kubeloop.controller import Context, Controller, PrimaryKind, Request, Result

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    k = min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))
    return s[k]


# --------------------------------------------------------------------------- noop


async def bench_noop(client: Client, ns: str, items: int, workers: int) -> dict[str, Any]:
    done = 0
    finished = asyncio.Event()

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        nonlocal done
        done += 1
        if done == items:
            finished.set()
        return None

    ctl = Controller(f"bench-noop-{workers}", for_="v1/ConfigMap", namespace=ns, reconcile=reconcile,
                     max_concurrent_reconciles=workers, record_events=False)
    async with SharedCache(client) as cache, asyncio.TaskGroup() as tg:
        await ctl.start(tg, cache, timeout=30)
        reqs = [Request("default", ns, f"k{i}") for i in range(items)]
        cpu0, t0 = time.process_time(), time.perf_counter()
        for i, r in enumerate(reqs):
            ctl.enqueue(r)
            if i % 64 == 63:
                await asyncio.sleep(0)
        await finished.wait()
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        await ctl.stop(drain_timeout=5)
    return {"scenario": "noop", "workers": workers, "reconciles": items, "seconds": round(wall, 4),
            "reconciles_per_second": round(items / wall), "us_per_reconcile": round(wall / items * 1e6, 2),
            "cpu_us_per_reconcile": round(cpu / items * 1e6, 2)}


# --------------------------------------------------------------------------- latency


async def writer(kubeconfig: str, ns: str, rate: float, duration: float, keys: int, concurrency: int,
                 how: str = "http") -> None:
    """The writer process: patch ConfigMaps round-robin at ``rate``/s, the send time in the data.

    ``how="http"`` (the default) writes plain HTTP/1.1 requests on ``concurrency`` kept-alive
    connections, one request in flight on each: measured 0.23 ms of CPU per write against 0.53 ms
    through kubeloop's `Client` (aiohttp), both including the ~0.1 ms the pacing itself costs. The
    writer stands in for the cluster's other clients, whose CPU is not on the controller's machine;
    on this 2-core machine the `Client` writer took over half a core from the emulator and the
    controller, and that contention, not the path measured, set much of the p99.
    ``how="client"`` writes through kubeloop's `Client`.
    """
    from benchmarks.peers.writer import paced  # (ROOT is on sys.path once this module ran)

    total = int(rate * duration)
    errors = 0
    if how == "client":
        async with Client(load_kubeconfig(kubeconfig), qps=None, timeout=30) as client:
            await client.resolve("v1/ConfigMap")

            async def send(i: int) -> None:
                await client.patch("v1/ConfigMap", f"cm{i % keys}", {"data": {"t": repr(time.time())}},
                                   namespace=ns)
            elapsed, errors = await paced(send, total, rate, concurrency)
    else:
        cfg = load_kubeconfig(kubeconfig)
        url = urlsplit(cfg.server)
        if url.scheme != "http":
            raise SystemExit(f"--writer http needs a plain-HTTP server (the bench's emulator), not {cfg.server}")
        conns: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()
        for _ in range(concurrency):
            conns.put_nowait(await asyncio.open_connection(url.hostname, url.port))
        path = f"/api/v1/namespaces/{ns}/configmaps/cm%d".encode()

        async def send(i: int) -> None:
            reader, w = await conns.get()
            try:
                body = b'{"data":{"t":"%s"}}' % repr(time.time()).encode()
                w.write(b"PATCH " + path % (i % keys) + b" HTTP/1.1\r\nHost: bench\r\n"
                        b"Content-Type: application/merge-patch+json\r\nContent-Length: %d\r\n\r\n%s"
                        % (len(body), body))
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(int(h[15:]) for h in head.lower().split(b"\r\n") if h.startswith(b"content-length:"))
                await reader.readexactly(length)
                if not head.startswith(b"HTTP/1.1 200"):
                    raise RuntimeError(head.split(b"\r\n", 1)[0].decode())
            finally:
                conns.put_nowait((reader, w))
        elapsed, errors = await paced(send, total, rate, concurrency)
    print(json.dumps({"writes": total, "seconds": elapsed, "errors": errors, "writer": how}), flush=True)


@dataclass(frozen=True)
class ArrivalProbe:
    """The primary's event handler (enqueue the object), also recording when each request's change
    reached the controller (its source's subscription)."""

    arrived: dict[Request, float] = field(default_factory=dict, compare=False)
    role: str = "for"

    def requests(self, ev: Event, primary: PrimaryKind) -> tuple[Request]:
        req = Request(ev.cluster, ev.namespace, ev.name)
        self.arrived.setdefault(req, time.time())
        return (req,)


def probed(ctl: Controller, probe: ArrivalProbe) -> Controller:
    """``ctl`` with ``probe`` as its primary's event handler."""
    spec = ctl.spec
    return Controller.from_spec(dataclasses.replace(
        spec, sources=(dataclasses.replace(spec.primary, handler=probe), *spec.sources[1:])))


async def bare_watch(client: Client, ns: str, lat: list[float], stop: asyncio.Event) -> None:
    """Baseline: a bare watch loop in this process, recording when each change arrives."""
    rv = (await client.list("v1/ConfigMap", namespace=ns)).resource_version
    async with client.watch("v1/ConfigMap", namespace=ns, resource_version=rv) as w:
        async for ev in w:
            t = ((ev.object or {}).get("data") or {}).get("t")
            if t:
                lat.append(time.time() - float(t))
            if stop.is_set():
                return


async def bench_latency(kubeconfig: str, client: Client, ns: str, rate: float, duration: float, keys: int,
                        concurrency: int, baseline: bool = True, how: str = "http") -> dict[str, Any]:
    lat: list[float] = []
    inner: list[float] = []
    bare: list[float] = []
    reconciles = 0

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        nonlocal reconciles
        now = time.time()
        reconciles += 1
        arrived = probe.arrived.pop(req, None)
        obj = ctx.get()
        t = (obj.get("data") or {}).get("t") if obj is not None else None
        if t and measuring:
            lat.append(now - float(t))
            if arrived is not None:
                inner.append(now - arrived)
        return None

    measuring = False
    probe = ArrivalProbe()
    ctl = probed(Controller(f"bench-latency-{int(rate)}", for_="v1/ConfigMap", namespace=ns, reconcile=reconcile,
                            record_events=False), probe)
    stop = asyncio.Event()
    async with SharedCache(client) as cache, asyncio.TaskGroup() as tg:
        await ctl.start(tg, cache, timeout=60)
        watch_task = tg.create_task(bare_watch(client, ns, bare, stop)) if baseline else None
        await asyncio.sleep(0.5)  # the initial list's reconciles
        measuring = True
        r0 = reconciles
        cpu0 = time.process_time()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--writer", kubeconfig, ns, str(rate), str(duration), str(keys),
            str(concurrency), how, stdout=asyncio.subprocess.PIPE)
        out, _ = await proc.communicate()
        await asyncio.sleep(0.3)  # the last changes
        cpu = time.process_time() - cpu0
        n = reconciles - r0
        stop.set()
        if watch_task is not None:
            watch_task.cancel()
        await ctl.stop(drain_timeout=5)
    w = json.loads(out.decode().strip().splitlines()[-1])
    return {"scenario": "latency", "target_rate": rate, "achieved_rate": round(w["writes"] / w["seconds"]),
            "writes": w["writes"], "write_errors": w["errors"], "reconciles": n,
            "p50_ms": round(pct(lat, 50) * 1e3, 2), "p90_ms": round(pct(lat, 90) * 1e3, 2),
            "p99_ms": round(pct(lat, 99) * 1e3, 2), "max_ms": round(max(lat) * 1e3, 2) if lat else None,
            "mean_ms": round(statistics.fmean(lat) * 1e3, 2) if lat else None,
            "runtime_p50_ms": round(pct(inner, 50) * 1e3, 3), "runtime_p99_ms": round(pct(inner, 99) * 1e3, 3),
            "bare_watch_p50_ms": round(pct(bare, 50) * 1e3, 2), "bare_watch_p99_ms": round(pct(bare, 99) * 1e3, 2),
            "cpu_us_per_reconcile": round(cpu / max(n, 1) * 1e6, 1),
            "cpu_includes_baseline_watch": baseline, "writer": how}


# --------------------------------------------------------------------------- parent/child


async def stats(client: Client) -> dict[str, Any]:
    return await client.request_json("GET", "/_kubeloop/stats")


def count_writes(before: dict[str, Any], after: dict[str, Any]) -> int:
    n = 0
    for key, v in after.get("requests", {}).items():
        if key.split(" ", 1)[0] in ("create", "update", "patch", "delete"):
            n += v - before.get("requests", {}).get(key, 0)
    return n


async def bench_parent_child(client: Client, widgets: int, suppress: str | None, guarded: bool) -> dict[str, Any]:
    """The tests' Widget controller (ConfigMap + Deployment children, finalizer, status) with no
    predicate on the primary: create N widgets, converge, change every spec, converge, delete.

    ``suppress``: read your writes with that ``suppress_own_writes`` mode; None: read your writes off."""
    from tests.controller.conftest import widget_crd
    from tests.controller.parentchild import Record, widget_controller

    ryw = suppress is not None
    tag = f"{'plain' if suppress is None else suppress.replace('_', '-')}-{'guarded' if guarded else 'apply'}"
    group = f"bench-{tag}.example.com"
    ns = f"pc-{tag}"
    await client.create(widget_crd(group))
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for _ in range(200):
        with contextlib.suppress(Exception):
            await client.resolve(f"{group}/v1/Widget")
            break
        await asyncio.sleep(0.02)
    rec = Record()
    ctl = widget_controller(group, rec, name=f"bench-pc-{tag}", read_your_writes=ryw, predicates=None,
                            guarded_status=guarded, max_concurrent_reconciles=4, record_events=False,
                            suppress_own_writes=suppress or "reconciled_object")
    ref = f"{group}/v1/Widget"

    async def converged(size: int) -> None:
        for _ in range(1000):
            items = (await client.list(ref, namespace=ns)).items
            if len(items) == widgets and all((w.get("status") or {}).get("replicas") == size for w in items):
                return
            await asyncio.sleep(0.05)
        raise RuntimeError("widgets did not converge")

    async with SharedCache(client) as cache, asyncio.TaskGroup() as tg:
        await ctl.start(tg, cache, timeout=30)
        s0 = await stats(client)
        t0 = time.perf_counter()
        await asyncio.gather(*(client.create({"apiVersion": f"{group}/v1", "kind": "Widget",
                                              "metadata": {"name": f"w{i}"}, "spec": {"size": 1}}, namespace=ns)
                               for i in range(widgets)))
        await converged(1)
        await asyncio.gather(*(client.patch(ref, f"w{i}", {"spec": {"size": 2}}, namespace=ns)
                               for i in range(widgets)))
        await converged(2)
        await asyncio.sleep(0.5)
        elapsed = time.perf_counter() - t0
        s1 = await stats(client)
        steady_runs = sum(rec.reconciles.values())
        for i in range(widgets):
            ctl.enqueue(Request("default", ns, f"w{i}"))
        await asyncio.sleep(0.5)
        s2 = await stats(client)
        await ctl.stop(drain_timeout=5)
    # the user writes: N creates + N spec patches
    return {"scenario": "parent_child", "read_your_writes": ryw, "suppress_own_writes": suppress,
            "status_write": "guarded merge patch" if guarded else "server-side apply", "widgets": widgets,
            "reconciles": steady_runs, "reconciles_per_widget": round(steady_runs / widgets, 2),
            "conflicts": rec.conflicts, "controller_writes": count_writes(s0, s1) - 2 * widgets,
            "steady_state_writes_for_n_reconciles": count_writes(s1, s2), "seconds": round(elapsed, 3),
            "own_events_skipped": ctl.metrics.own_events_skipped}


@contextlib.contextmanager
def emulator_process() -> Any:
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = os.path.join(tmp, "kubeconfig")
        proc = subprocess.Popen([sys.executable, "-c", "from kubeloop.cli.main import main; main()", "apiserver",
                                 "--port", "0", "--bare",  # the API server alone: no controller-manager
                                 "--kubeconfig-out", kubeconfig], stdout=subprocess.PIPE, cwd=ROOT)
        try:
            assert proc.stdout is not None
            if not proc.stdout.readline():  # the URL line: ready
                raise RuntimeError("the emulator did not start")
            yield kubeconfig
        finally:
            proc.terminate()
            proc.wait(10)


async def run_all(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with emulator_process() as kubeconfig:
        async with Client(load_kubeconfig(kubeconfig), qps=None, timeout=30) as client:
            await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}})
            if "noop" in args.scenarios:
                for workers in (1, 8):
                    rows.append(await bench_noop(client, "bench", args.noop_items, workers))
            sem = asyncio.Semaphore(16)

            async def mk(i: int) -> None:
                async with sem:
                    await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm{i}"},
                                         "data": {}}, namespace="bench")
            if "latency" in args.scenarios:
                await asyncio.gather(*(mk(i) for i in range(args.keys)))
            for guarded in (False, True) if "parent_child" in args.scenarios else ():
                for suppress in ("reconciled_object", "all", None):
                    rows.append(await bench_parent_child(client, args.widgets, suppress, guarded))
            for rate in args.rates if "latency" in args.scenarios else ():
                rows.append(await bench_latency(kubeconfig, client, "bench", rate, args.duration, args.keys,
                                                args.concurrency, baseline=not args.no_baseline, how=args.writer))
    return rows


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--writer":
        kubeconfig, ns, rate, duration, keys, conc, how = argv[1:8]
        asyncio.run(writer(kubeconfig, ns, float(rate), float(duration), int(keys), int(conc), how))
        return 0
    logging.basicConfig(level=logging.ERROR)  # the plain runs' Conflict retries are expected
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--noop-items", type=int, default=10_000, help="requests per noop run (default 10000)")
    parser.add_argument("--rates", type=lambda s: [float(x) for x in s.split(",")], default=[100.0, 1000.0],
                        help="changes/s for the latency runs (default 100,1000)")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per latency run (default 3)")
    parser.add_argument("--keys", type=int, default=200, help="ConfigMaps the writer cycles through (default 200)")
    parser.add_argument("--concurrency", type=int, default=8, help="writer requests in flight (default 8)")
    parser.add_argument("--writer", choices=("http", "client"), default="http",
                        help="the latency runs' writer: plain HTTP requests (default) or kubeloop's Client "
                             "(2.3x the CPU per write, taken from the emulator and the controller)")
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip the bare baseline watch (then CPU per reconcile is the controller's alone)")
    parser.add_argument("--widgets", type=int, default=20, help="parents in the parent/child run (default 20)")
    parser.add_argument("--scenarios", type=lambda s: set(s.split(",")), default={"noop", "parent_child", "latency"},
                        help="which scenarios to run (default noop,parent_child,latency)")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "controller.json")
    args = parser.parse_args(argv)
    rows = asyncio.run(run_all(args))
    result = {
        "benchmark": "controller",
        "command": " ".join(["python benchmarks/controller_bench.py", *argv]),
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cpus",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "results": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{'scenario':<10} {'workers/rate':>12} {'rec/s':>8} {'us/rec':>8} {'cpu us/rec':>10} "
          f"{'p50 ms':>8} {'p99 ms':>8} {'achieved/s':>10} {'watch p50/p99':>14} {'runtime p50/p99':>16}")
    for r in rows:
        if r["scenario"] == "noop":
            print(f"{'noop':<10} {r['workers']:>12} {r['reconciles_per_second']:>8} {r['us_per_reconcile']:>8} "
                  f"{r['cpu_us_per_reconcile']:>10} {'-':>8} {'-':>8} {'-':>10}")
        elif r["scenario"] == "parent_child":
            continue
        else:
            print(f"{'latency':<10} {int(r['target_rate']):>12} {'-':>8} {'-':>8} {r['cpu_us_per_reconcile']:>10} "
                  f"{r['p50_ms']:>8} {r['p99_ms']:>8} {r['achieved_rate']:>10} "
                  f"{r['bare_watch_p50_ms']:>6}/{r['bare_watch_p99_ms']:<7} {r['runtime_p50_ms']:>7}/{r['runtime_p99_ms']:<8}")
    print()
    print(f"{'parent/child':<38} {'reconciles/widget':>17} {'conflicts':>9} {'ctl writes':>10} "
          f"{'steady writes':>13} {'own events skipped':>18}")
    for r in rows:
        if r["scenario"] == "parent_child":
            label = (f"ryw {r['suppress_own_writes']}" if r["read_your_writes"] else "plain") + ", " + r["status_write"]
            print(f"{label:<38} {r['reconciles_per_widget']:>17} {r['conflicts']:>9} {r['controller_writes']:>10} "
                  f"{r['steady_state_writes_for_n_reconciles']:>13} {r['own_events_skipped']:>18}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
