"""Informer benchmark: ingest, watch-path CPU, memory per object, read latency.

Everything runs against one emulator started as a separate process (`kubeloop apiserver`), so the
server's CPU is not billed to the client side being measured. Objects are realistic Pods (~4 KiB
with managedFields, labels, ownerReferences, status conditions) and ConfigMaps
(benchmarks/store_objects.py).

- ingest: wall time from start to synced, informer (default transform and codec, built-in owner
  indexes) vs a bare loop (paginated LIST, 500 objects a page, + orjson into a dict). Target <= 1.3x.
  Also reported: the bare loop at the informer's own page size (LIST_PAGE_SIZE), and the time until
  the informer's background compaction finished (`await informer.compacted()`).
- watch: CPU seconds per watch event in this process, informer (decode, transform, store,
  2 user indexes, 3 subscribers draining) vs a bare watch loop (decode + dict update). The writes
  come from a child process. Target <= 2x.
- memory: per cached object, RSS growth and tracemalloc, each in a fresh child process, informer vs
  plain dicts, as a ratio to the JSON size of the transformed objects. Target <= 1.0x. The informer
  is measured after its background compaction finished; its RSS at synced time is reported too.
  The watch and read measurements also start after compaction (steady state).
- reads: `get` by key and index lookups, p50/p99 in microseconds. Target p50 < 20 us.

    .venv/bin/python benchmarks/informer_bench.py                 # small default (1000 objects)
    .venv/bin/python benchmarks/informer_bench.py --objects 10000 # the issue's size (slow to populate)

Writes benchmarks/results/informer.json and prints a short table.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from store_objects import make_configmap, make_pod  # noqa: E402

from kubeloop.cache import OWNER_INDEX, ClientSource, Informer, strip_managed_fields  # noqa: E402
from kubeloop.client import ALL_NAMESPACES, Client  # noqa: E402
from kubeloop.config import load_kubeconfig  # noqa: E402
from kubeloop.watch import WatchConfig  # noqa: E402

LIST_PAGE_SIZE = WatchConfig().page_size or 500
"""The informer's LIST page size (its default `WatchConfig`'s)."""

KINDS = {"pods": "v1/Pod", "configmaps": "v1/ConfigMap"}
NAMESPACES = [f"team-{i}" for i in range(8)]


def rss_bytes() -> int:
    """Resident memory, after handing freed heap back to the OS (so transient peaks do not count)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def make_client(kubeconfig: str) -> Client:
    return Client(load_kubeconfig(kubeconfig), qps=None, timeout=120)


# ---------------------------------------------------------------------------------------- server


class Emulator:
    """`kubeloop apiserver` in a child process."""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="kl-informer-bench-")
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")
        self.proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> Emulator:
        code = "from kubeloop.cli.main import main; main()"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code, "apiserver", "--port", "0", "--kubeconfig-out", self.kubeconfig,
             "--no-gc", "--history-size", "200000"],
            stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url:
            raise RuntimeError("the emulator did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)


def pod_for_create(i: int) -> tuple[dict[str, Any], dict[str, Any]]:
    p = make_pod(i)
    for k in ("uid", "resourceVersion", "creationTimestamp", "managedFields"):
        p["metadata"].pop(k, None)
    status = p.pop("status")
    return p, status


def cm_for_create(i: int) -> dict[str, Any]:
    c = make_configmap(i)
    for k in ("uid", "resourceVersion", "creationTimestamp", "managedFields"):
        c["metadata"].pop(k, None)
    return c


async def populate(kubeconfig: str, n: int) -> None:
    async with make_client(kubeconfig) as client:
        for ns in NAMESPACES:
            await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        sem = asyncio.Semaphore(16)

        async def pod(i: int) -> None:
            async with sem:
                body, status = pod_for_create(i)
                await client.apply(body, field_manager="kube-controller-manager")
                await client.apply_status({"apiVersion": "v1", "kind": "Pod", "metadata": {
                    "name": body["metadata"]["name"], "namespace": body["metadata"]["namespace"]},
                    "status": status}, field_manager="kubelet")

        async def cm(i: int) -> None:
            async with sem:
                await client.apply(cm_for_create(i), field_manager="kubectl-client-side-apply")

        await asyncio.gather(*(pod(i) for i in range(n)), *(cm(i) for i in range(n)))


# ---------------------------------------------------------------------------------------- ingest


async def bare_list(client: Client, resource: str, limit: int = 500) -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    async for page in client.list_pages(resource, namespace=ALL_NAMESPACES, limit=limit):
        for obj in page.items:
            md = obj["metadata"]
            out[(md.get("namespace", ""), md["name"])] = obj
    return out


def new_informer(client: Client, resource: str, **kwargs: Any) -> Informer:
    return Informer(ClientSource(client, resource), resource=resource, **kwargs)


async def bench_ingest(kubeconfig: str, repeat: int) -> dict[str, Any]:
    """Synced time and fully-compacted time of the informer vs the bare loop (at the watcher's default
    500-object pages, and at the informer's own LIST_PAGE_SIZE), runs interleaved, medians."""
    out: dict[str, Any] = {}
    async with make_client(kubeconfig) as client:
        for kind, resource in KINDS.items():
            await client.resolve(resource)
            await bare_list(client, resource)  # warm up connections and the server
            bare: list[float] = []
            bare_small: list[float] = []
            inf: list[float] = []
            compacted: list[float] = []
            count = 0
            for _ in range(repeat):
                for limit, into in ((500, bare), (LIST_PAGE_SIZE, bare_small)):
                    gc.collect()
                    t = time.perf_counter()
                    objs = await bare_list(client, resource, limit)
                    into.append(time.perf_counter() - t)
                    count = len(objs)
                    del objs
                gc.collect()
                t = time.perf_counter()
                i = new_informer(client, resource)
                async with i:
                    await i.wait_synced(600)
                    inf.append(time.perf_counter() - t)
                    await i.compacted()
                    compacted.append(time.perf_counter() - t)
                assert len(i.store) == count and i.store.pending_compaction == 0
                del i
            med = statistics.median
            out[kind] = {"objects": count, "bare_s": med(bare), "informer_s": med(inf),
                         "informer_compacted_s": med(compacted),
                         f"bare_page{LIST_PAGE_SIZE}_s": med(bare_small),
                         "bare_min_s": min(bare), "informer_min_s": min(inf),
                         "ratio": med(inf) / med(bare),
                         "ratio_same_page_size": med(inf) / med(bare_small),
                         "ratio_compacted": med(compacted) / med(bare)}
    return out


# ---------------------------------------------------------------------------------------- watch


async def writer(kubeconfig: str, count: int) -> None:
    """Child process: `count` label patches on random Pods."""
    async with make_client(kubeconfig) as client:
        pods = (await client.list("v1/Pod", namespace=ALL_NAMESPACES)).items
        rng = random.Random(7)
        run = str(time.time_ns())  # every run changes every label it touches (no no-op patches)
        sem = asyncio.Semaphore(8)

        async def one(i: int) -> None:
            p = rng.choice(pods)["metadata"]
            async with sem:
                await client.patch("v1/Pod", p["name"], {"metadata": {"labels": {"bench": f"{run}-{i}"}}},
                                   namespace=p["namespace"])

        await asyncio.gather(*(one(i) for i in range(count)))


def start_writer(kubeconfig: str, count: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, __file__, "--child", "writer", "--kubeconfig", kubeconfig,
                             "--events", str(count)])


async def bench_watch(kubeconfig: str, events: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with make_client(kubeconfig) as client:
        # bare loop: watch from now, decode (in the client), keep the latest object per key
        start_rv = (await client.list_page("v1/Pod", namespace=ALL_NAMESPACES, limit=1)).resource_version
        latest: dict[tuple[str, str], dict[str, Any]] = {}
        seen = 0
        proc = start_writer(kubeconfig, events)
        cpu = time.process_time()
        async with client.watch("v1/Pod", namespace=ALL_NAMESPACES, resource_version=start_rv) as stream:
            async for ev in stream:
                md = ev.object.get("metadata") or {}
                latest[(md.get("namespace", ""), md.get("name", ""))] = ev.object
                seen += 1
                if seen >= events:
                    break
        bare_cpu = time.process_time() - cpu
        proc.wait()
        out["bare_us_per_event"] = bare_cpu / events * 1e6

        # the informer: transform, store (codec), owner indexes + 2 user indexes, 3 subscribers
        inf = new_informer(client, "v1/Pod")
        inf.add_index("node", lambda o: o["spec"].get("nodeName"))
        inf.add_index("app", lambda o: (o["metadata"].get("labels") or {}).get("app"))
        received = [0, 0, 0]
        done = asyncio.Event()

        async def drain(idx: int) -> None:
            sub = inf.subscribe(replay=False)
            async for ev in sub:
                _ = ev.key
                received[idx] += 1
                if received[idx] >= events and min(received) >= events:
                    done.set()

        async with inf, asyncio.TaskGroup() as tg:
            await inf.wait_synced(600)
            await inf.compacted()  # the list's background compaction is not billed to watch events
            subs = [tg.create_task(drain(i)) for i in range(3)]
            await asyncio.sleep(0.2)
            gc.collect()
            proc = start_writer(kubeconfig, events)
            cpu = time.process_time()
            await asyncio.wait_for(done.wait(), 120)
            # write-back compaction of the changed objects is billed too (a store count: no event to wait on)
            while inf.store.pending_compaction:  # noqa: ASYNC110
                await asyncio.sleep(0.05)
            inf_cpu = time.process_time() - cpu
            proc.wait()
            for t in subs:
                t.cancel()
        out["informer_us_per_event"] = inf_cpu / events * 1e6
        out["ratio"] = out["informer_us_per_event"] / out["bare_us_per_event"]
        out["events"] = events
    return out


# ---------------------------------------------------------------------------------------- memory


async def child_memory(kubeconfig: str, resource: str, mode: str, traced: bool) -> dict[str, Any]:
    """Child process: load `resource` as an informer or as plain dicts; report the memory it holds."""
    async with make_client(kubeconfig) as client:
        await client.resolve(resource)
        await client.list_page(resource, namespace=ALL_NAMESPACES, limit=1)  # warm: connections, imports
        # run every code path once on an empty list (a full warm-up would leave freed memory behind
        # for the measured load to reuse, hiding its RSS growth)
        warm = Informer(ClientSource(client, resource, label_selector="kubeloop-bench=none"), resource=resource)
        async with warm:
            await warm.wait_synced(600)
        del warm
        gc.collect()
        if traced:
            tracemalloc.start()
        base_rss = rss_bytes()
        holder: Any
        if mode == "dicts":
            holder = await bare_list(client, resource)
            holder = {k: strip_managed_fields(v) for k, v in holder.items()}
            synced_rss = None
        else:
            synced_rss = 0
            holder = new_informer(client, resource)
            async with holder:
                await holder.wait_synced(600)
                if not traced:
                    synced_rss = rss_bytes() - base_rss  # before the background compaction
                await holder.compacted()
        gc.collect()
        result = {"rss_growth": rss_bytes() - base_rss, "objects": len(holder if mode == "dicts" else holder.store)}
        if synced_rss:
            result["rss_growth_at_synced"] = synced_rss
        if traced:
            result["traced"] = tracemalloc.get_traced_memory()[0]
            tracemalloc.stop()
        if mode != "dicts":
            result["store"] = holder.store.stats()
        return result


def run_child(kubeconfig: str, resource: str, mode: str, traced: bool) -> dict[str, Any]:
    args = [sys.executable, __file__, "--child", "memory", "--kubeconfig", kubeconfig, "--resource", resource,
            "--mode", mode] + (["--traced"] if traced else [])
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


async def json_size(kubeconfig: str, resource: str) -> tuple[int, int, int]:
    async with make_client(kubeconfig) as client:
        objs = (await client.list(resource, namespace=ALL_NAMESPACES)).items
    raw = sum(len(orjson.dumps(o)) for o in objs)
    stripped = sum(len(orjson.dumps(strip_managed_fields(o))) for o in objs)
    return len(objs), raw, stripped


def bench_memory(kubeconfig: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind, resource in KINDS.items():
        n, raw, stripped = asyncio.run(json_size(kubeconfig, resource))
        row: dict[str, Any] = {"objects": n, "json_bytes_per_object": raw / n,
                               "transformed_json_bytes_per_object": stripped / n}
        for mode in ("informer", "dicts"):
            plain = run_child(kubeconfig, resource, mode, traced=False)
            traced = run_child(kubeconfig, resource, mode, traced=True)
            row[mode] = {
                "rss_bytes_per_object": plain["rss_growth"] / n,
                "traced_bytes_per_object": traced["traced"] / n,
                "rss_ratio": plain["rss_growth"] / stripped,
                "traced_ratio": traced["traced"] / stripped,
            }
            if "store" in plain:
                row[mode]["store"] = plain["store"]
            if "rss_growth_at_synced" in plain:
                row[mode]["rss_ratio_at_synced"] = plain["rss_growth_at_synced"] / stripped
        out[kind] = row
    return out


# ---------------------------------------------------------------------------------------- reads


def percentiles(samples: list[float]) -> dict[str, float]:
    samples.sort()
    return {"p50_us": samples[len(samples) // 2] / 1000, "p99_us": samples[int(len(samples) * 0.99)] / 1000}


async def bench_reads(kubeconfig: str, samples: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with make_client(kubeconfig) as client:
        inf = new_informer(client, "v1/Pod")
        inf.add_index("node", lambda o: o["spec"].get("nodeName"))
        async with inf:
            await inf.wait_synced(600)
            await inf.compacted()  # steady state: every object in its compact form
            reader = inf.reader
            keys = reader.keys()
            nodes = reader.index_values("node")
            rng = random.Random(3)
            clock = time.perf_counter_ns
            gets: list[float] = []
            for _ in range(samples):
                ns, name = keys[rng.randrange(len(keys))]
                t = clock()
                reader.get(name, ns)
                gets.append(clock() - t)
            hot: list[float] = []
            hot_keys = keys[:16]
            for i in range(samples):
                ns, name = hot_keys[i % 16]
                t = clock()
                reader.get(name, ns)
                hot.append(clock() - t)
            for index, values in (("owner", reader.index_values(OWNER_INDEX)), ("node", nodes)):
                ikeys: list[float] = []
                views: list[float] = []
                sizes: list[int] = []
                idx = OWNER_INDEX if index == "owner" else "node"
                for _ in range(max(200, samples // 10)):
                    value = values[rng.randrange(len(values))]
                    t = clock()
                    reader.index_keys(idx, value)
                    ikeys.append(clock() - t)
                    t = clock()
                    got = reader.by_index(idx, value)
                    views.append(clock() - t)
                    sizes.append(len(got))
                out[f"index_keys_{index}"] = {**percentiles(ikeys), "objects_per_lookup": statistics.mean(sizes)}
                out[f"by_index_{index}"] = {**percentiles(views), "objects_per_lookup": statistics.mean(sizes)}
            out["get_random"] = percentiles(gets)
            out["get_hot"] = percentiles(hot)
            out["codec"] = inf.store.codec.name
    return out


# ---------------------------------------------------------------------------------------- main


def table(results: dict[str, Any]) -> str:
    lines = []
    for kind, r in results["ingest"].items():
        lines.append(f"ingest {kind:<10} {r['objects']:>6} objs  bare {r['bare_s']:.3f}s  informer synced "
                     f"{r['informer_s']:.3f}s  ratio {r['ratio']:.2f}x (target <= 1.3x); vs bare at "
                     f"{LIST_PAGE_SIZE}/page {r[f'bare_page{LIST_PAGE_SIZE}_s']:.3f}s {r['ratio_same_page_size']:.2f}x; "
                     f"compacted {r['informer_compacted_s']:.3f}s {r['ratio_compacted']:.2f}x")
    w = results["watch"]
    lines.append(f"watch  pods        bare {w['bare_us_per_event']:.0f} us/event  informer "
                 f"{w['informer_us_per_event']:.0f} us/event  ratio {w['ratio']:.2f}x (target <= 2x)")
    for kind, r in results["memory"].items():
        i, d = r["informer"], r["dicts"]
        lines.append(f"memory {kind:<10} json {r['transformed_json_bytes_per_object']:.0f} B/obj (raw "
                     f"{r['json_bytes_per_object']:.0f})  informer rss {i['rss_ratio']:.2f}x (at synced "
                     f"{i.get('rss_ratio_at_synced', 0):.2f}x) traced "
                     f"{i['traced_ratio']:.2f}x  dicts rss {d['rss_ratio']:.2f}x traced {d['traced_ratio']:.2f}x "
                     f"(target <= 1.0x)")
    rd = results["reads"]
    lines.append(f"reads  get random p50 {rd['get_random']['p50_us']:.1f} p99 {rd['get_random']['p99_us']:.1f} us; "
                 f"get hot p50 {rd['get_hot']['p50_us']:.1f} us (target p50 < 20 us)")
    for index in ("owner", "node"):
        k, v = rd[f"index_keys_{index}"], rd[f"by_index_{index}"]
        lines.append(f"reads  index {index:<5} ({k['objects_per_lookup']:.0f} objs/key) index_keys p50 {k['p50_us']:.1f} "
                     f"p99 {k['p99_us']:.1f} us; by_index (views) p50 {v['p50_us']:.0f} p99 {v['p99_us']:.0f} us")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--objects", type=int, default=1000, help="Pods and ConfigMaps each (default 1000)")
    ap.add_argument("--events", type=int, default=1000, help="watch events for the CPU measurement")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--samples", type=int, default=20000, help="read-latency samples")
    ap.add_argument("--out", default=str(HERE / "results" / "informer.json"))
    ap.add_argument("--child", choices=["writer", "memory"], help=argparse.SUPPRESS)
    ap.add_argument("--kubeconfig", help=argparse.SUPPRESS)
    ap.add_argument("--resource", help=argparse.SUPPRESS)
    ap.add_argument("--mode", help=argparse.SUPPRESS)
    ap.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child == "writer":
        asyncio.run(writer(args.kubeconfig, args.events))
        return
    if args.child == "memory":
        print(json.dumps(asyncio.run(child_memory(args.kubeconfig, args.resource, args.mode, args.traced))))
        return
    with Emulator() as emu:
        t = time.perf_counter()
        asyncio.run(populate(emu.kubeconfig, args.objects))
        populate_s = time.perf_counter() - t
        results: dict[str, Any] = {
            "command": " ".join([".venv/bin/python", "benchmarks/informer_bench.py", *sys.argv[1:]]),
            "objects": args.objects, "populate_s": populate_s, "python": sys.version.split()[0],
        }
        results["ingest"] = asyncio.run(bench_ingest(emu.kubeconfig, args.repeat))
        results["watch"] = asyncio.run(bench_watch(emu.kubeconfig, args.events))
        results["memory"] = bench_memory(emu.kubeconfig)
        results["reads"] = asyncio.run(bench_reads(emu.kubeconfig, args.samples))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
