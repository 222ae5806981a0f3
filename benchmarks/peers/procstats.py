"""CPU seconds and memory of another process, from /proc (Linux), so the parent can measure an
operator without instrumenting it."""

from __future__ import annotations

import os
from dataclasses import dataclass

_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of `pid` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # after "pid (comm)": state is field 3; utime and stime are fields 14 and 15
    return (int(fields[11]) + int(fields[12])) / _TICK


@dataclass(frozen=True)
class Memory:
    rss_mb: float
    peak_rss_mb: float


def memory(pid: int) -> Memory:
    """Current (VmRSS) and peak (VmHWM) resident memory of `pid`, in MiB."""
    values: dict[str, float] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":", 1)
                values[key] = int(value.split()[0]) / 1024
    return Memory(values.get("VmRSS", 0.0), values.get("VmHWM", 0.0))
