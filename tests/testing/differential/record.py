"""Record the differential scenarios from a real kube-apiserver 1.24 into the project's data file.

Record from a kube-apiserver *without* kube-controller-manager (the replay runs against the bare
emulator: no namespace controller, garbage collector or workload controllers write behind the
scenarios' backs), e.g. a second apiserver + etcd started from the real-cluster binaries on other
ports:

    python -m tests.testing.differential.record --kubeconfig /tmp/fidk8s/kubeconfig
    python -m tests.testing.differential.record --kubeconfig ... --only services_types,rbac_rules

`--only` re-records the named scenarios and keeps the others. A scenario is recorded only when
two runs against the real server agree (so nothing time-dependent slips in); `--check` replays the
file against any server instead (the emulator: `--url http://127.0.0.1:PORT`).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import gzip
import json
import ssl
import sys
import tempfile
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from .harness import Run, compare_steps
from .scenarios import SCENARIOS

DATA = Path(__file__).resolve().parents[1] / "data" / "differential.json.gz"


def load(path: Path = DATA) -> dict[str, Any]:
    if not path.exists():
        return {"scenarios": {}}
    return dict(json.loads(gzip.decompress(path.read_bytes())))


def save(data: dict[str, Any], path: Path = DATA) -> None:
    raw = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    path.write_bytes(gzip.compress(raw, mtime=0))


def _target(args: argparse.Namespace) -> tuple[str, str | None, ssl.SSLContext | bool | None]:
    if args.url:
        return args.url, args.token, None
    cfg = yaml.safe_load(Path(args.kubeconfig).read_text())
    ctx_name = cfg.get("current-context")
    ctx = next(c["context"] for c in cfg["contexts"] if c["name"] == ctx_name)
    cluster = next(c["cluster"] for c in cfg["clusters"] if c["name"] == ctx["cluster"])
    user = next(u["user"] for u in cfg["users"] if u["name"] == ctx["user"])
    sslctx: ssl.SSLContext | bool | None = None
    if cluster.get("certificate-authority-data"):
        with tempfile.NamedTemporaryFile("wb", delete=False, suffix=".crt") as f:
            f.write(base64.b64decode(cluster["certificate-authority-data"]))
        sslctx = ssl.create_default_context(cafile=f.name)
    return cluster["server"], user.get("token"), sslctx


async def run_scenario(name: str, url: str, token: str | None, sslctx: ssl.SSLContext | bool | None,
                       session: aiohttp.ClientSession) -> list[dict[str, Any]]:
    run = Run(url, session, token, sslctx)
    try:
        await SCENARIOS[name](run)
    finally:
        await run.run_cleanup()
    return run.steps


async def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kubeconfig")
    p.add_argument("--url")
    p.add_argument("--token")
    p.add_argument("--only", default="")
    p.add_argument("--check", action="store_true", help="compare with the recording instead of recording")
    p.add_argument("--out", type=Path, default=DATA)
    args = p.parse_args(argv)
    url, token, sslctx = _target(args)
    names = [n for n in args.only.split(",") if n] or list(SCENARIOS)
    data = load(args.out)
    failed = 0
    async with aiohttp.ClientSession() as session:
        for name in names:
            first = await run_scenario(name, url, token, sslctx, session)
            if args.check:
                problems = compare_steps(data["scenarios"].get(name, []), first)
            else:
                second = await run_scenario(name, url, token, sslctx, session)
                problems = compare_steps(first, second)
            if problems:
                failed += 1
                print(f"FAIL {name}: " + "\n  ".join(problems[:10]))
                continue
            print(f"{'PASS' if args.check else 'RECORDED'} {name} ({len(first)} steps)")
            if not args.check:
                data["scenarios"][name] = first
    if not args.check:
        data["source"] = ("kube-apiserver v1.24.0+3882f8f with etcd 3.4, without kube-controller-manager "
                          "(tests/testing/differential/record.py)")
        save(data, args.out)
        total = sum(len(v) for v in data["scenarios"].values())
        print(f"{args.out}: {len(data['scenarios'])} scenarios, {total} steps")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
