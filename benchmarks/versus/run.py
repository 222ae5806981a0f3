"""Launch one side as its own process and talk to it (report lines on its stdout, commands on its
stdin; CPU read from /proc by pid), and drive the writer against it (`write_and_wait`)."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
SIDES = ("kubeloop", "bare")
PROFILE_DIR: Path | None = None
"""Set by ``--profile DIR``: every side runs under cProfile and leaves DIR/<side>-<mode>-<kind>.pstats."""


class SideFailed(RuntimeError):
    """The side exited or did not report in time; the message carries its stderr's tail."""


class Side:
    """``with Side("kubeloop", "warmup", kind, ns, kubeconfig, workdir) as s: s.expect("synced")``."""

    def __init__(self, side: str, mode: str, kind: str, namespace: str, kubeconfig: str, workdir: Path) -> None:
        self.side, self.mode = side, mode
        self.cmd = [sys.executable, "-m", f"benchmarks.versus.{side}_side", mode, kind, namespace, kubeconfig]
        self.env = dict(os.environ)
        self.env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), self.env.get("PYTHONPATH", "")) if p)
        self.log = workdir / f"{side}-{mode}-{kind}.log"
        if PROFILE_DIR is not None:
            self.env["VERSUS_PROFILE"] = str(PROFILE_DIR / f"{side}-{mode}-{kind}.pstats")
        self.proc: subprocess.Popen[bytes] | None = None
        self.launched = 0.0
        self.seen: dict[str, dict[str, Any]] = {}
        self._buf = b""

    def __enter__(self) -> Side:
        with open(self.log, "wb") as log:
            self.launched = time.time()
            self.proc = subprocess.Popen(self.cmd, env=self.env, cwd=ROOT, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=log)
        return self

    def __exit__(self, *exc: object) -> None:
        """Close stdin (the side returns and exits, writing its profile if asked); kill if it lingers."""
        if self.proc is None:
            return
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(30 if PROFILE_DIR is not None else 5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def send(self, command: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(command.encode() + b"\n")
        self.proc.stdin.flush()

    def expect(self, event: str, timeout: float = 600.0) -> dict[str, Any]:
        """The next report line of this `event` (earlier lines are kept in `seen`)."""
        assert self.proc is not None and self.proc.stdout is not None
        out = self.proc.stdout
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(out, selectors.EVENT_READ)
            while True:
                while b"\n" in self._buf:
                    line, self._buf = self._buf.split(b"\n", 1)
                    ev = json.loads(line)
                    self.seen[ev["event"]] = ev
                    if ev["event"] == event:
                        return dict(ev)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SideFailed(f"{self.side} {self.mode}: no {event!r} within {timeout:.0f}s\n{self.tail()}")
                if sel.select(min(left, 1.0)):
                    chunk = os.read(out.fileno(), 65536)
                    if not chunk:
                        self.proc.wait()
                        raise SideFailed(f"{self.side} {self.mode} exited ({self.proc.returncode}) before "
                                         f"{event!r}\n{self.tail()}")
                    self._buf += chunk

    def tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid


def write_and_wait(s: Side, kubeconfig: str, namespace: str, rate: float, seconds: float, keys: int,
                   seen_before: int, *, wait: float, poll: float) -> dict[str, Any]:
    """Run the writer (`benchmarks.peers.writer`: `keys` ConfigMaps of `namespace` patched at `rate`
    for `seconds`), then ask the side for its event count until it has seen every write that
    succeeded (or `wait` seconds passed); returns the writer's report."""
    writer = subprocess.run([sys.executable, "-m", "benchmarks.peers.writer", kubeconfig, namespace,
                             str(rate), str(seconds), str(keys), "32"],
                            cwd=ROOT, env=s.env, capture_output=True, text=True, check=True)
    wrote: dict[str, Any] = json.loads(writer.stdout.strip().splitlines()[-1])
    want = seen_before + wrote["writes"] - wrote["errors"]
    deadline = time.monotonic() + wait
    while True:
        s.send("count")
        if s.expect("count", wait)["events"] >= want or time.monotonic() > deadline:
            return wrote
        time.sleep(poll)
