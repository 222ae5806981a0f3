"""The API server emulator as a subprocess (`kubeloop apiserver`), so its CPU is not counted in
any operator's, and its request counters (GET /_kubeloop/stats)."""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import sys
import urllib.request
from collections import Counter
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")


class Emulator:
    """``with Emulator(workdir) as emu:`` starts the server and writes ``emu.kubeconfig``.

    ``tls=True`` serves HTTPS, as every real API server does: a client's TLS context and buffers are
    part of what it holds (about 1 MB of RSS per process, 0.1x of the JSON of 10,000 ConfigMaps).
    """

    def __init__(self, workdir: Path, *, tls: bool = False) -> None:
        self.tls = tls
        self.kubeconfig = str(workdir / "kubeconfig")
        self.log = workdir / "apiserver.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def __enter__(self) -> Emulator:
        kubeloop = Path(sys.executable).with_name("kubeloop")
        cmd = [str(kubeloop)] if kubeloop.exists() else [sys.executable, "-m", "kubeloop.cli.main"]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([*cmd, "apiserver", "--port", "0", "--kubeconfig-out", self.kubeconfig,
                                          "--tls" if self.tls else "--no-tls"], stdout=subprocess.PIPE, stderr=log)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode().strip()
        if not line.startswith("http"):
            self.proc.kill()
            self.proc.wait()
            tail = "\n".join(self.log.read_text(errors="replace").splitlines()[-15:])
            raise RuntimeError(f"the emulator did not start:\n{tail}")
        self.url = line
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stats(self) -> dict[str, Any]:
        """The emulator's counters: ``open_watches`` per resource, ``requests`` per "verb resource"."""
        context = None
        if self.tls:
            ca = yaml.safe_load(Path(self.kubeconfig).read_text())["clusters"][0]["cluster"]["certificate-authority-data"]
            context = ssl.create_default_context(cadata=base64.b64decode(ca).decode())
        with urllib.request.urlopen(f"{self.url}/_kubeloop/stats", timeout=10, context=context) as resp:
            data: dict[str, Any] = json.loads(resp.read())
        return data


def request_delta(before: dict[str, Any], after: dict[str, Any]) -> Counter[str]:
    """Requests per "verb resource" made between two stats snapshots."""
    delta: Counter[str] = Counter(after.get("requests", {}))
    delta.subtract(before.get("requests", {}))
    return Counter({k: v for k, v in delta.items() if v})


def writes(delta: Counter[str]) -> Counter[str]:
    """Only the write requests of a delta."""
    return Counter({k: v for k, v in delta.items() if k.split(" ", 1)[0] in WRITE_VERBS})


def env_with_kubeconfig(kubeconfig: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["KUBECONFIG"] = kubeconfig
    env.update(extra)
    return env
