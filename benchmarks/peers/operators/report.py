"""The operators' side of the report protocol: JSON lines appended to the file $PEERS_REPORT,
which the parent polls (stdout is left to the frameworks' logs). The kopf operator has its own
copy of these few lines because it runs in kopf's virtual environment, without kubeloop."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any

T0 = time.time()
"""Set at import; `mark_start()` moves it to the operator's start (after its imports)."""
LABEL = "peers/group"
STAMP = "peers/t"


@dataclass(frozen=True)
class Settings:
    """What the parent asked for (environment variables, the same for every framework)."""

    mode: str
    kind: str
    namespace: str
    n: int
    report: str
    kubeconfig: str
    controllers: int
    resync: float

    @classmethod
    def from_env(cls) -> Settings:
        env = os.environ
        return cls(mode=env["PEERS_MODE"], kind=env.get("PEERS_KIND", "configmaps"), namespace=env["PEERS_NS"],
                   n=int(env.get("PEERS_N", "0")), report=env["PEERS_REPORT"], kubeconfig=env["KUBECONFIG"],
                   controllers=int(env.get("PEERS_CONTROLLERS", "5")), resync=float(env.get("PEERS_RESYNC", "10")))


def mark_start() -> None:
    """The operator starts now: in-process times count from here, and older stamps are ignored."""
    global T0
    T0 = time.time()


def report(path: str, event: str, **fields: Any) -> None:
    """Append one line; the parent reads it."""
    with open(path, "a") as f:
        f.write(json.dumps({"event": event, "t": time.time(), "t0": T0, **fields}) + "\n")
