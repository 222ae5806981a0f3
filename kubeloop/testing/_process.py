"""`APIServerProcess`: `kubeloop apiserver` in a child process, for benchmarks and black-box tests.

An in-process `APIServer` shares the event loop (and the GIL) with the code under test; a benchmark
that must not measure the emulator runs it in its own process instead:

    with APIServerProcess(token="t") as api:
        api.url, api.kubeconfig
        api.fail_next(2, 503)          # the fault API through the admin endpoints
        api.stats()
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any


class APIServerProcess:
    """Runs `kubeloop apiserver` until closed; its faults and stats are reached over HTTP."""

    def __init__(self, *, token: str | None = None, tls: bool = False, extra_args: tuple[str, ...] = ()) -> None:
        self.token = token
        self.tls = tls
        self.extra_args = extra_args
        self.url = ""
        self.kubeconfig = ""
        self._proc: subprocess.Popen[str] | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    def start(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="kubeloop-apiserver-")
        self.kubeconfig = str(Path(self._tmp.name) / "kubeconfig")
        args = [sys.executable, "-c", "from kubeloop.cli.main import main; main()", "apiserver",
                "--kubeconfig-out", self.kubeconfig, "--tls" if self.tls else "--no-tls", *self.extra_args]
        if self.token:
            args += ["--token", self.token]
        self._proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self._proc.stdout is not None
        self.url = self._proc.stdout.readline().strip()
        if not self.url:
            err = self._proc.stderr.read() if self._proc.stderr else ""
            self.stop()
            raise RuntimeError(f"kubeloop apiserver did not start: {err.strip()}")

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            for stream in (self._proc.stdout, self._proc.stderr):
                if stream is not None:
                    stream.close()
            self._proc = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> APIServerProcess:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # ---- admin endpoints -------------------------------------------------------------------
    def _admin(self, what: str, method: str = "POST", **params: Any) -> Any:
        import ssl

        query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        req = urllib.request.Request(f"{self.url}/_kubeloop/{what}" + (f"?{query}" if query else ""),
                                     method=method, data=b"" if method == "POST" else None)
        ctx = ssl._create_unverified_context() if self.tls else None  # local throwaway CA
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            return json.loads(r.read())

    def stats(self) -> dict[str, Any]:
        result: dict[str, Any] = self._admin("stats", "GET")
        return result

    def close_watches(self, resource: str | None = None) -> int:
        return int(self._admin("close-watches", resource=resource)["closed"])

    def expire_next_watch(self, resource: str, count: int = 1) -> None:
        self._admin("expire-next-watch", resource=resource, count=count)

    def compact(self) -> None:
        self._admin("compact")

    def delay(self, seconds: float, resource: str | None = None) -> None:
        self._admin("delay", seconds=seconds, resource=resource)

    def fail_next(self, count: int, code: int = 500, *, resource: str | None = None, retry_after: int = 1,
                  verbs: tuple[str, ...] | None = None) -> None:
        self._admin("fail", count=count, code=code, resource=resource, retryAfter=retry_after,
                    verbs=",".join(verbs) if verbs else None)

    def reset(self) -> None:
        self._admin("reset")
