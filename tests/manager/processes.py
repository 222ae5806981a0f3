"""Subprocess helpers: the emulator as `kubeloop apiserver`, and `kubeloop run` against it."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp

KUBELOOP = str(Path(sys.executable).with_name("kubeloop"))
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Emulator:
    url: str
    kubeconfig: str


@contextlib.asynccontextmanager
async def emulator_process(tmp: Path) -> AsyncIterator[Emulator]:
    """`kubeloop apiserver --kubeconfig-out F` in a subprocess, until the block ends."""
    kubeconfig = tmp / "kubeconfig"
    proc = await asyncio.create_subprocess_exec(KUBELOOP, "apiserver", "--kubeconfig-out", str(kubeconfig),
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 20)
        assert line.startswith(b"http"), line
        yield Emulator(line.decode().strip(), str(kubeconfig))
    finally:
        if proc.returncode is None:
            proc.terminate()
            await proc.wait()


async def start_run(*args: str) -> asyncio.subprocess.Process:
    """`kubeloop run ARGS...` from the repository root (stderr captured)."""
    return await asyncio.create_subprocess_exec(KUBELOOP, "run", *args, cwd=str(ROOT),
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def wait_http_ok(url: str, proc: asyncio.subprocess.Process, within: float = 20.0) -> None:
    """Poll ``url`` until it answers 200 (fails early if the process exits)."""
    async with asyncio.timeout(within), aiohttp.ClientSession() as session:
        while True:
            if proc.returncode is not None:
                err = await proc.stderr.read() if proc.stderr else b""
                raise AssertionError(f"kubeloop run exited with {proc.returncode}: {err.decode()[-2000:]}")
            with contextlib.suppress(aiohttp.ClientError):
                async with session.get(url) as resp:
                    if resp.status == 200:
                        return
            await asyncio.sleep(0.05)
