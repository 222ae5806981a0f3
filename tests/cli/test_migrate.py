"""`kubeloop migrate CRD`: the stored objects rewritten in the storage version and storedVersions
pruned, then nothing left to do; a CRD that does not exist is one line. Runs the command as a
process against the emulator or the real cluster."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from kubeloop import Client
from kubeloop.testing import TestCluster
from tests.webhooks.test_migration import CRD, things_stored_as_v1

KUBELOOP = str(Path(sys.executable).with_name("kubeloop"))


async def kubeloop_migrate(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(KUBELOOP, "migrate", *args, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_migrate_rewrites_then_has_nothing_left_to_do(apiserver: TestCluster, client: Client,
                                                            namespace: str) -> None:
    name = await things_stored_as_v1(client, namespace, 5)
    try:
        code, out, err = await kubeloop_migrate(name, "--kubeconfig", apiserver.kubeconfig, "--page-size", "2")
        assert code == 0, err
        line = out.strip()
        assert line.startswith(f"{name}: ") and " rewritten in v2, " in line, line
        assert line.split(": ")[1].split()[0] == "5"
        assert line.endswith("storedVersions ['v1', 'v2'] -> ['v2']"), line
        assert (await client.get(CRD, name))["status"]["storedVersions"] == ["v2"]

        code, out, err = await kubeloop_migrate(name, "--kubeconfig", apiserver.kubeconfig)
        assert (code, out.strip()) == (0, f"{name}: already stored in v2 only"), err
    finally:
        await client.delete(CRD, name)


async def test_an_unknown_crd_is_one_line(apiserver: TestCluster) -> None:
    code, _, err = await kubeloop_migrate("nope.tests.kubeloop.dev", "--kubeconfig", apiserver.kubeconfig)
    assert code == 1
    assert err.strip() == "Error: CustomResourceDefinition nope.tests.kubeloop.dev not found", err
