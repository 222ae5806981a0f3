"""The informer's write path in process, without I/O: what one watched change costs in
`Informer._handle` (transform, store write, index, the Event, one subscriber) and in
`Store.apply` alone, against a bare loop's `orjson.loads` + dict and label-index update.

The socket, the event loop and the watch stream are left out on purpose (``benchmarks.versus``
measures the whole path between processes); this isolates the store's bookkeeping, which is what a
change to `kubeloop.cache` moves. ``--root DIR`` measures another checkout's kubeloop in the same
run (a child process per side, interleaved), for before/after comparisons:

    .venv/bin/python benchmarks/write_path_bench.py                      # this checkout
    .venv/bin/python benchmarks/write_path_bench.py --root /tmp/before   # and another, interleaved

Writes benchmarks/results/write_path.json and prints a short table: medians over --runs, and
the median of each run's ratio to the bare loop measured in the same process (this shared
machine's speed changes between runs; the ratio does not).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LABEL = "versus/group"
KEYS = 200


def configmap(i: int, rv: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"churn-{i:05d}", "namespace": "bench", "uid": f"6f1c2b3a-0000-4000-8000-{i:012d}",
                         "resourceVersion": str(rv), "creationTimestamp": "2026-11-24T10:00:00Z",
                         "labels": {LABEL: f"g{i % 10}", "app": "bench"},
                         "annotations": {"bench/stamp": f"{rv}.5"}},
            "data": {f"k{j}": ("%032x" % (i * 7919 + j)) * 8 for j in range(3)}}


def by_group(obj: Any) -> str | None:
    value = (obj["metadata"].get("labels") or {}).get(LABEL)
    return str(value) if value is not None else None


def child(changes: int) -> dict[str, float]:
    """Runs in the side's process: µs per change for each path, kubeloop from sys.path."""
    import orjson

    from kubeloop.cache import ClientSource, Informer, Store
    from kubeloop.watch import Apply

    lines = [orjson.dumps({"type": "MODIFIED", "object": configmap(i % KEYS, 1000 + i)}) for i in range(changes)]

    def bare() -> float:  # the same update as bare_side.py's watch loop (inline there: a call per event
        # would slow the reference)
        objects: dict[tuple[str, str], Any] = {}
        index: dict[str, set[tuple[str, str]]] = {}
        t = time.process_time()
        for line in lines:
            obj = orjson.loads(line)["object"]
            meta = obj["metadata"]
            key = (meta.get("namespace", ""), meta["name"])
            old = objects.get(key)
            if old is not None:
                was = (old["metadata"].get("labels") or {}).get(LABEL)
                if was is not None:
                    index[was].discard(key)
            objects[key] = obj
            group = (meta.get("labels") or {}).get(LABEL)
            if group is not None:
                index.setdefault(group, set()).add(key)
        return time.process_time() - t

    def informer() -> float:
        inf = Informer(ClientSource(None, "v1/ConfigMap", namespace="bench"), resource="v1/ConfigMap")  # type: ignore[arg-type]
        inf.add_index("group", by_group)
        sub = inf.subscribe()
        handle = inf._handle
        t = time.process_time()
        for k, line in enumerate(lines):
            handle(Apply(orjson.loads(line)["object"]))
            if k % 16 == 15:
                sub.drain()
        return time.process_time() - t

    def store() -> float:
        s = Store(defer_writes=True)
        s.add_index("group", by_group)
        objs = [orjson.loads(line)["object"] for line in lines]
        t = time.process_time()
        for obj in objs:
            s.apply(obj)
        return time.process_time() - t

    async def measure() -> dict[str, float]:
        out: dict[str, float] = {}
        for name, fn in (("bare", bare), ("informer", informer), ("store_apply", store)):
            gc.collect()
            out[name] = fn() / changes * 1e6
        return out

    return asyncio.run(measure())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--changes", type=int, default=20000, help="changes per measurement (20000)")
    ap.add_argument("--runs", type=int, default=5, help="runs per side (5), interleaved")
    ap.add_argument("--root", action="append", default=[], help="another checkout to measure as well")
    ap.add_argument("--out", default=str(HERE / "results" / "write_path.json"))
    ap.add_argument("--_child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._child:
        print(json.dumps(child(a.changes)))
        return 0
    roots = [str(HERE.parent)] + [str(Path(r).resolve()) for r in a.root]
    runs: dict[str, list[dict[str, float]]] = {r: [] for r in roots}
    for run in range(a.runs):
        for root in roots if run % 2 == 0 else roots[::-1]:  # alternate: the first of a pair runs slower here
            env = dict(os.environ, PYTHONPATH=root)
            out = subprocess.run([sys.executable, str(HERE / "write_path_bench.py"), "--_child", "--changes",
                                  str(a.changes)], env=env, cwd=root, check=True, capture_output=True, text=True)
            runs[root].append(json.loads(out.stdout))
    table = {root: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for root, rs in runs.items()}
    for root, rs in runs.items():  # per-run ratios to the bare loop: robust to the machine's speed changing
        table[root]["informer_x_bare"] = statistics.median(r["informer"] / r["bare"] for r in rs)
        table[root]["store_apply_x_bare"] = statistics.median(r["store_apply"] / r["bare"] for r in rs)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps({"changes": a.changes, "runs": runs, "medians_us": table}, indent=1) + "\n")
    print("| checkout | bare loop µs/change | Informer._handle µs/change (x bare) | Store.apply µs/change (x bare) |")
    print("|---|---|---|---|")
    for root, m in table.items():
        print(f"| {root} | {m['bare']:.2f} | {m['informer']:.2f} ({m['informer_x_bare']:.2f}x) | "
              f"{m['store_apply']:.2f} ({m['store_apply_x_bare']:.2f}x) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
