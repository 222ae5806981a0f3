"""client-go's informer as the third side: ``informerbench`` (the shared real-cluster kit's
``informerbench/main.go``, client-go 1.24: one SharedIndexInformer with a label index), each run
its own process, interleaved with kubeloop's and the bare loop's.

What it reports and how it lines up with the other two:

- start -> synced: informerbench times its start until ``HasSynced`` (``sync_s``, polled every
  1 ms) after creating its client. From launch is that plus its start-up, measured in the same round
  as the wall time of a run that exits right after creating its client (``--resource none``): the
  Go runtime, flag parsing, the kubeconfig and the client, as the Python sides' interpreter start
  and imports count for them.
- memory: after sync it runs the collector twice and returns freed memory to the OS, then reports
  its heap (``HeapAlloc``) and RSS. What it holds for the objects is that minus the same run's
  figures on an empty list (a label selector matching nothing), as the Python sides' memory is
  their growth over a warmed empty baseline.
- CPU per watch event: with ``--watch-seconds S`` it then counts the add/update/delete
  notifications and its process CPU time (user + sys) over S seconds; the writer changes
  ConfigMaps at the fixed rate inside that window.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.versus.run import ROOT

NONE_SELECTOR = "versus/none=1"
"""A label selector no object has: the empty baseline."""


def available(path: str | None) -> str | None:
    """Why the client-go side cannot run (None when it can)."""
    if not path:
        return "no --client-go binary given"
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        return f"{path} is not an executable file"
    return None


def _run(path: str, kubeconfig: str, *args: str, timeout: float = 3600) -> tuple[float, list[dict[str, Any]]]:
    """Run informerbench to its end; (wall seconds from launch to exit, its JSON lines)."""
    t = time.perf_counter()
    proc = subprocess.run([path, "--kubeconfig", kubeconfig, *args], capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"informerbench {' '.join(args)} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return wall, [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def startup(path: str, kubeconfig: str) -> float:
    """Seconds from launch to exit of a run that stops right after creating its client."""
    t = time.perf_counter()
    proc = subprocess.run([path, "--kubeconfig", kubeconfig, "--resource", "none"], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 2 or "unknown --resource" not in proc.stderr:
        raise RuntimeError(f"informerbench --resource none: expected exit 2, got {proc.returncode}: {proc.stderr[-500:]}")
    return time.perf_counter() - t


def one_load(path: str, kind: str, namespace: str, kubeconfig: str) -> dict[str, Any]:
    """One process: sync `kind` in `namespace`; the figures in the Python sides' terms (see the
    module docstring), with the start-up and the empty baseline measured beside it."""
    start = startup(path, kubeconfig)
    _, base = _run(path, kubeconfig, "--resource", kind, "--namespace", namespace, "--label-selector", NONE_SELECTOR)
    wall, lines = _run(path, kubeconfig, "--resource", kind, "--namespace", namespace)
    r = lines[0]
    return {"from_launch_s": start + r["sync_s"], "in_process_s": r["sync_s"], "startup_s": start,
            "launch_to_exit_s": wall, "objects": r["objects"],
            "heap": r["heap_alloc_bytes"] - base[0]["heap_alloc_bytes"], "heap_total": r["heap_alloc_bytes"],
            "rss": r["rss_bytes"] - base[0]["rss_bytes"], "rss_total": r["rss_bytes"],
            "heap_empty": base[0]["heap_alloc_bytes"], "rss_empty": base[0]["rss_bytes"]}


def one_churn(path: str, kubeconfig: str, namespace: str, rate: float, seconds: float, keys: int) -> dict[str, Any]:
    """One process watching `namespace`'s ConfigMaps while the writer changes `keys` of them at
    `rate` for `seconds` inside its watch window; CPU seconds per notification."""
    window = seconds + 4.0
    proc = subprocess.Popen([path, "--kubeconfig", kubeconfig, "--resource", "configmaps", "--namespace", namespace,
                             "--watch-seconds", str(window)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        if not first:
            raise RuntimeError(f"informerbench did not sync: {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.5)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
        writer = subprocess.run([sys.executable, "-m", "benchmarks.peers.writer", kubeconfig, namespace, str(rate),
                                 str(seconds), str(keys), "32"], cwd=ROOT, env=env, capture_output=True, text=True,
                                check=True)
        wrote: dict[str, Any] = json.loads(writer.stdout.strip().splitlines()[-1])
        second = proc.stdout.readline()
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if not second:
        raise RuntimeError("informerbench ended its watch window without a report")
    r = json.loads(second)
    return {"events": r["events"], "cpu_s": r["cpu_s"], "writes": wrote["writes"],
            "achieved_per_s": wrote["writes"] / wrote["seconds"], "window_s": window,
            "us_per_event": r["cpu_s"] / max(1, r["events"]) * 1e6}


def binary_info(path: str) -> dict[str, Any]:
    """What identifies the binary measured (its path, size and modification time)."""
    st = Path(path).stat()
    return {"path": path, "bytes": st.st_size, "mtime": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(st.st_mtime))}
