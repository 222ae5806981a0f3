"""Instructions per watch event, counted by valgrind's callgrind: the deterministic twin of the
CPU-per-event row (``--phases instructions``; needs ``valgrind``, which pip cannot install).

CPU time per event on a shared 2-core machine moves by ±25% between runs of the same code;
instruction counts repeat to within ~1%, so a change of a few percent shows. They leave out what
instructions do not capture (cache misses, the kernel's side of a system call), so they complement
the timed row rather than replace it.

Each side runs the churn protocol of ``benchmarks.versus.cli.one_churn`` under callgrind, at a rate
slow enough for it to keep up (20 changes/s instead of 400: an event still arrives on its own, as
at 400/s), over 10 keys instead of 200 so that each key is rewritten every 0.5 s, as in the timed
run (the informer's compaction then skips superseded writes in the same proportion). Counting
starts after "ready" (callgrind_control --zero) and is dumped after the closing mark, which waits
for the side's own pending work (kubeloop's compaction).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from benchmarks.versus.run import Side, write_and_wait

RATE = 20.0
SECONDS = 10.0
KEYS = 10


def available() -> bool:
    """valgrind and callgrind_control are installed."""
    return shutil.which("valgrind") is not None and shutil.which("callgrind_control") is not None


def _control(*args: str) -> None:
    subprocess.run(["callgrind_control", *args], check=True, capture_output=True)


def _counted(prefix: str) -> int:
    """Instructions in the dump callgrind wrote on request (the part after the last --zero)."""
    for path in glob.glob(prefix + ".*"):
        with open(path) as f:
            for line in f:
                if line.startswith("totals:"):
                    return int(line.split()[1])
    raise RuntimeError(f"callgrind wrote no dump at {prefix}.*")


def one_count(side: str, kubeconfig: str, namespace: str, workdir: Path) -> dict[str, Any]:
    """One side under callgrind: instructions per watch event while a writer changes `KEYS` ConfigMaps."""
    out = str(workdir / f"{side}.callgrind")
    for stale in glob.glob(out + "*"):
        os.remove(stale)
    s = Side(side, "churn", "configmaps", namespace, kubeconfig, workdir)
    s.cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *s.cmd]
    with s:
        s.expect("ready", 900)
        time.sleep(1.0)
        s.send("mark")
        start = s.expect("mark", 300)
        _control("--zero", str(s.pid))
        write_and_wait(s, kubeconfig, namespace, RATE, SECONDS, KEYS, start["events"], wait=300, poll=0.2)
        s.send("mark")
        end = s.expect("mark", 300)
        _control("--dump", str(s.pid))
        s.send("quit")
    events = end["events"] - start["events"]
    instructions = _counted(out)
    return {"events": events, "instructions": instructions, "per_event": instructions / max(1, events),
            "rate": RATE, "keys": KEYS}
