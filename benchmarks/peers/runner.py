"""Run one operator (kubeloop, kopf or the bare loop) as its own subprocess and follow its report
file; CPU and memory are read from /proc by pid (the server's are never counted)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.peers import procstats
from benchmarks.peers.emulator import env_with_kubeconfig

ROOT = Path(__file__).resolve().parent.parent.parent
OPERATORS = Path(__file__).resolve().parent / "operators"
FRAMEWORKS = ("kubeloop", "kopf", "bare", "kubeloop-dict")
"""kubeloop-dict: kubeloop with its cache holding plain dicts (codec="dict") instead of the default
compact zstd form: a variant showing what the compact store costs in CPU and saves in memory."""


def compile_sources() -> None:
    """Byte-compile kubeloop and the sides, as installing a package does (pip writes the .pyc of
    aiohttp and orjson): with PYTHONDONTWRITEBYTECODE set, or in a fresh checkout, every launch of
    kubeloop's side would otherwise compile ~70 modules from source (~0.1 s) that the bare side's
    installed libraries do not."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "kubeloop"), str(ROOT / "benchmarks")],
                   check=True, stdout=subprocess.DEVNULL)


class OperatorFailed(RuntimeError):
    """The operator exited or did not report in time; the message carries its log's tail."""


class Operator:
    """One operator process. ``start()``, ``wait_for("ready")``, measure, ``stop()``."""

    def __init__(self, framework: str, mode: str, *, namespace: str, kubeconfig: str, workdir: Path,
                 kopf: Path | None = None, kind: str = "configmaps", n: int = 0, controllers: int = 5,
                 resync: float = 10.0) -> None:
        self.framework, self.mode = framework, mode
        tag = f"{framework}-{mode}-{kind}-{namespace}-{n}"
        self.report = workdir / f"{tag}.jsonl"
        self.log = workdir / f"{tag}.log"
        self.report.unlink(missing_ok=True)
        if framework == "kopf":
            if kopf is None:
                raise ValueError("kopf's executable is needed to run kopf")
            self.cmd = [str(kopf), "run", "--standalone", "--namespace", namespace,
                        str(OPERATORS / "kopf_operator.py")]
        else:
            module = framework.split("-", 1)[0]
            self.cmd = [sys.executable, "-m", f"benchmarks.peers.operators.{module}_operator"]
        self.env = env_with_kubeconfig(kubeconfig, PEERS_MODE=mode, PEERS_KIND=kind, PEERS_NS=namespace,
                                       PEERS_N=str(n), PEERS_REPORT=str(self.report),
                                       PEERS_CONTROLLERS=str(controllers), PEERS_RESYNC=str(resync))
        if framework == "kubeloop-dict":
            self.env["PEERS_CODEC"] = "dict"
        self.env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), self.env.get("PYTHONPATH", "")) if p)
        self.proc: subprocess.Popen[bytes] | None = None
        self.launched = 0.0
        self._seen: list[dict[str, Any]] = []

    # ---- lifetime
    def start(self) -> Operator:
        with open(self.log, "wb") as log:
            self.launched = time.time()
            self.proc = subprocess.Popen(self.cmd, env=self.env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def events(self) -> list[dict[str, Any]]:
        if self.report.exists():
            lines = self.report.read_text().splitlines()
            self._seen = [json.loads(line) for line in lines if line.endswith("}")]
        return self._seen

    def wait_for(self, event: str, timeout: float) -> dict[str, Any]:
        """The first report line of this `event`; fails loudly if the process dies or times out."""
        deadline = time.monotonic() + timeout
        while True:
            for ev in self.events():
                if ev["event"] == event:
                    return ev
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise OperatorFailed(f"{self.framework} {self.mode} exited ({self.proc.returncode}) before "
                                     f"{event!r}:\n{self.tail()}")
            if time.monotonic() > deadline:
                raise OperatorFailed(f"{self.framework} {self.mode}: no {event!r} within {timeout:.0f}s:\n"
                                     f"{self.tail()}")
            time.sleep(0.02)

    def stop(self, final: bool = False, timeout: float = 30.0) -> dict[str, Any] | None:
        """SIGTERM and wait; with `final`, the operator's closing report line."""
        if self.proc is None or self.proc.poll() is not None:
            return None
        self.proc.send_signal(signal.SIGTERM)
        try:
            result = self.wait_for("final", timeout) if final else None
        finally:
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return result

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> Operator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.kill()

    # ---- measurements
    def cpu(self) -> float:
        return procstats.cpu_seconds(self.pid)

    def memory(self) -> procstats.Memory:
        return procstats.memory(self.pid)

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"
