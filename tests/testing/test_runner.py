"""`OperatorRunner`: an operator module runs as `kubeloop run` would, inside the test's event loop."""

from __future__ import annotations

import asyncio
import textwrap
from datetime import timedelta
from pathlib import Path

import pytest

from kubeloop import Client
from kubeloop.manager import LoadError, ManagerError
from kubeloop.resources import crd
from kubeloop.testing import OperatorRunner, TestCluster, VirtualClock, eventually, install_crd

CRONJOB = Path(__file__).parents[2] / "examples" / "cronjob" / "controller.py"


def write(tmp_path: Path, source: str) -> str:
    path = tmp_path / "operator_under_test.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


async def test_runs_an_example_file_in_virtual_time(apiserver: TestCluster, client: Client, namespace: str) -> None:
    from examples.cronjob.controller import JOB, CronJob

    await install_crd(client, crd(CronJob))
    clock = VirtualClock()
    async with OperatorRunner(str(CRONJOB), kubeconfig=apiserver.kubeconfig, clock=clock) as op:
        assert op.manager.ready
        await client.create(CronJob(metadata={"name": "nightly", "namespace": namespace},
                                    spec={"schedule": "@hourly", "job_template": {"spec": {"parallelism": 0, "template": {
                                        "spec": {"restartPolicy": "Never", "containers": [
                                            {"name": "c", "image": "busybox"}]}}}}}).to_object())
        await eventually(lambda: op.manager.controllers[0].primary_store().get("nightly", namespace) is not None,
                         what="the operator to see the CronJob")
        await clock.run_for(timedelta(hours=1), op.manager)
        assert [j["metadata"]["name"] for j in await client.list(JOB, namespace=namespace)
                if j["metadata"]["name"].startswith("nightly-")]
    assert op.exception is None
    assert "started the run of" in op.output  # the reconcile's ctx.log lines are captured
    assert any(getattr(r, "controller", None) == "cronjob" for r in op.records)


async def test_a_controllers_list_module_with_its_own_logger(tmp_path: Path, client: Client, namespace: str) -> None:
    target = write(tmp_path, f"""
        import logging
        from kubeloop import Controller

        log = logging.getLogger("my.operator")

        async def reconcile(req, ctx):
            log.info("saw %s", req.name)

        controllers = [Controller("cm-watcher", for_="v1/ConfigMap", namespace={namespace!r}, reconcile=reconcile)]
    """)
    async with OperatorRunner(target, client=client) as op:
        await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "hello", "namespace": namespace}})
        await eventually(lambda: "saw hello" in op.output, what="the operator's own log line")
    assert "INFO my.operator: saw hello" in op.output
    assert await client.get("v1/Namespace", namespace)  # a client given stays open: it is the caller's


async def test_a_failing_operator_is_reported(tmp_path: Path, client: Client) -> None:
    target = write(tmp_path, """
        import asyncio
        from kubeloop import Controller

        async def reconcile(req, ctx):
            pass

        async def boom(manager):
            await manager.wait_ready(30)  # once running: a real cluster's first list takes its time
            await asyncio.sleep(0.05)
            raise RuntimeError("lost the database")

        def setup(manager):
            manager.add(Controller("noop", for_="v1/ConfigMap", namespace="default", reconcile=reconcile))
            manager.add_runnable(boom, name="db")
    """)
    runner = OperatorRunner(target, client=client)
    with pytest.raises(ManagerError, match="lost the database"):
        async with runner:
            await eventually(lambda: runner.manager.failure is not None, what="the failure")
    assert isinstance(runner.exception, ManagerError)

    quiet = OperatorRunner(target, client=client, reraise=False)
    async with quiet:
        await eventually(lambda: quiet.manager.failure is not None, what="the failure")
    assert "lost the database" in str(quiet.exception)


async def test_an_operator_failing_before_it_is_ready_raises_its_error(tmp_path: Path, client: Client) -> None:
    target = write(tmp_path, """
        from kubeloop import Controller

        async def reconcile(req, ctx):
            pass

        async def boom(manager):
            raise RuntimeError("no database at start-up")

        def setup(manager):
            manager.add(Controller("noop", for_="v1/ConfigMap", namespace="default", reconcile=reconcile))
            manager.add_runnable(boom, name="db")
    """)
    runner = OperatorRunner(target, client=client, ready_timeout=30)
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(ManagerError, match="no database at start-up"):
        async with runner:
            pytest.fail("the block must not run: the operator never was ready")
    assert loop.time() - started < 10  # not the ready timeout
    assert isinstance(runner.exception, ManagerError)


async def test_load_errors_are_kubeloop_runs(tmp_path: Path, client: Client) -> None:
    with pytest.raises(LoadError, match="no such file"):
        async with OperatorRunner(str(tmp_path / "missing.py"), client=client):
            pass
    with pytest.raises(LoadError, match="defines no controllers"):
        async with OperatorRunner(write(tmp_path, "x = 1\n"), client=client):
            pass
