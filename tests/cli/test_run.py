"""`kubeloop run`: one-line errors, and the module convention (subprocesses; no cluster needed
for the errors)."""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path
from typing import Any

import yaml

from kubeloop.manager import LoadError, default_lease_name, load_target

KUBELOOP = str(Path(sys.executable).with_name("kubeloop"))
ROOT = Path(__file__).resolve().parents[2]


async def kubeloop_run(*args: str, cwd: Path = ROOT) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(KUBELOOP, "run", *args, cwd=str(cwd),
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode is not None
    return proc.returncode, err.decode()


def error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("Error: ")]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr, stderr
    return lines[0]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kubeconfig_for(path: Path, server: str) -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    return path


async def test_missing_file_and_module() -> None:
    code, err = await kubeloop_run("examples/nope/controller.py")
    assert code == 1 and error_line(err) == "Error: no such file: examples/nope/controller.py"
    code, err = await kubeloop_run("no_such_module_here")
    assert code == 1
    assert error_line(err).startswith("Error: no module named 'no_such_module_here' (give a file such as")


async def test_module_without_controllers(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_text("X = 1\n")
    code, err = await kubeloop_run(str(tmp_path / "empty.py"))
    assert code == 1
    assert error_line(err) == (f"Error: {tmp_path / 'empty.py'} defines no controllers: give it "
                               "`controllers = [Controller(...), ...]`, `def setup(manager): manager.add(...)` or "
                               "`webhooks = Webhooks(...)`")
    (tmp_path / "broken.py").write_text("import json\nraise RuntimeError('boom at import')\n")
    code, err = await kubeloop_run(str(tmp_path / "broken.py"))
    assert code == 1
    line = error_line(err)
    assert line.startswith(f"Error: error importing {tmp_path / 'broken.py'}: RuntimeError: boom at import")
    assert "broken.py:2" in line


async def test_unreachable_cluster_is_named_after_a_bounded_retry(tmp_path: Path) -> None:
    server = f"http://127.0.0.1:{closed_port()}"
    kubeconfig = kubeconfig_for(tmp_path / "kubeconfig", server)
    code, err = await kubeloop_run("examples/webapp/controller.py", "--kubeconfig", str(kubeconfig),
                                   "--metrics-port", "0", "--health-port", "0", "--connect-timeout", "0.5")
    assert code == 1
    line = error_line(err)
    assert line.startswith(f"Error: cannot reach cluster 'default' at {server} (gave up after"), line


async def test_bad_kubeconfig_is_one_line(tmp_path: Path) -> None:
    code, err = await kubeloop_run("examples/webapp/controller.py", "--kubeconfig", str(tmp_path / "missing"))
    assert code == 1
    assert str(tmp_path / "missing") in error_line(err)
    kubeconfig = kubeconfig_for(tmp_path / "kubeconfig", "http://127.0.0.1:1")
    code, err = await kubeloop_run("examples/webapp/controller.py", "--kubeconfig", str(kubeconfig),
                                   "--context", "nope")
    assert code == 1 and "context 'nope' not found" in error_line(err)


def test_load_target_honours_packages_and_module_names() -> None:
    mod = load_target(str(ROOT / "examples" / "webapp" / "controller.py"))
    assert mod.__name__ == "examples.webapp.controller" and callable(mod.setup)
    assert default_lease_name(mod) == "examples-webapp-controller"
    assert load_target("examples.configmap_generator.controller").controllers
    try:
        load_target(str(ROOT / "docs"))
    except LoadError as exc:
        assert "is a directory, not a Python file or package" in str(exc)
    else:
        raise AssertionError("a directory without __init__.py loaded")


async def test_json_logs_shared_port_and_default_lease_name(apiserver: Any) -> None:
    """Only a kubeconfig is needed: runs on the emulator or on a real cluster."""
    import json
    import signal

    import aiohttp

    from examples.configmap_generator.controller import ConfigMapGenerator
    from kubeloop.client import Client, NotFound
    from kubeloop.config import load_kubeconfig
    from kubeloop.manager._lease import LEASE
    from kubeloop.resources import crd
    from kubeloop.testing import eventually, install_crd

    lease_name = "examples-configmap-generator-controller"
    async with Client(load_kubeconfig(apiserver.kubeconfig)) as client:
        await install_crd(client, crd(ConfigMapGenerator))
        # a real cluster may hold this Lease from an earlier run: its holder stays the leader until
        # the lease expires as the new candidate observes it (client-go's rule), after /readyz
        try:
            earlier = (await client.get(LEASE, lease_name, namespace="default"))["spec"].get("holderIdentity")
            existed = True
        except NotFound:
            earlier, existed = None, False
    port = closed_port()
    proc = await asyncio.create_subprocess_exec(
        KUBELOOP, "run", "examples/configmap_generator/controller.py", "--kubeconfig", apiserver.kubeconfig,
        "--health-port", str(port), "--metrics-port", str(port), "--bind-address", "127.0.0.1",
        "--log-format", "json", "--leader-election", "--lease-duration", "2", "--renew-deadline", "1.5",
        "--retry-period", "0.2", cwd=str(ROOT), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        async with aiohttp.ClientSession() as session, asyncio.timeout(20):
            while True:
                assert proc.returncode is None
                try:
                    async with session.get(f"http://127.0.0.1:{port}/readyz") as r:
                        if r.status == 200:
                            break
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.05)
            async with session.get(f"http://127.0.0.1:{port}/metrics") as r:  # same port
                assert r.status == 200 and "leader_election_master_status" in await r.text()
        async with Client(load_kubeconfig(apiserver.kubeconfig)) as client:
            async def taken_over() -> bool:
                holder = (await client.get(LEASE, lease_name, namespace="default"))["spec"].get("holderIdentity")
                return bool(holder) and holder != earlier
            await eventually(taken_over, 10, what="the Lease held by the new process")
        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), 10)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0
    records = [json.loads(line) for line in err.decode().splitlines() if line.strip()]
    assert records and all({"ts", "level", "logger", "msg"} <= r.keys() for r in records)
    assert any(r["logger"] == "kubeloop.manager._leader" and "became the leader" in r["msg"] for r in records)
    if not existed:  # the Lease is this test's: remove it (it was released on SIGTERM)
        async with Client(load_kubeconfig(apiserver.kubeconfig)) as client:
            await client.delete(LEASE, lease_name, namespace="default")


def test_the_users_own_logging_shows_at_info_and_debug_with_verbose(capsys: Any) -> None:
    """Issue 11 item 12: `kubeloop run` shows the operator's own log lines, not only kubeloop's."""
    import logging

    from kubeloop.cli.run import configure_logging

    root = logging.getLogger()
    saved = (list(root.handlers), root.level, logging.getLogger("kubeloop").level)
    try:
        configure_logging("text", verbose=False)
        logging.getLogger("my_operator").info("reconciled %s", "web")
        logging.info("from the root logger")
        logging.getLogger("my_operator").debug("hidden detail")
        logging.getLogger("aiohttp.access").info("GET /healthz")  # library noise stays out
        configure_logging("text", verbose=True)
        logging.getLogger("my_operator.sub").debug("shown detail")
        err = capsys.readouterr().err
    finally:
        for h in list(root.handlers):
            root.removeHandler(h)
        for h in saved[0]:
            root.addHandler(h)
        root.setLevel(saved[1])
        logging.getLogger("kubeloop").setLevel(saved[2])
        for name in ("asyncio", "aiohttp"):
            logging.getLogger(name).setLevel(logging.NOTSET)
    assert "INFO    my_operator: reconciled web" in err
    assert "from the root logger" in err
    assert "hidden detail" not in err and "GET /healthz" not in err
    assert "DEBUG   my_operator.sub: shown detail" in err
