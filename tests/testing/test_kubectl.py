"""kubectl against the emulator (skipped when kubectl is not installed)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil

import pytest

from kubeloop.testing import APIServer

KUBECTL = shutil.which("kubectl")
DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
"""


async def _kubectl(kubeconfig: str, *args: str, stdin: str | None = None) -> str:
    assert KUBECTL is not None
    proc = await asyncio.create_subprocess_exec(
        KUBECTL, *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**os.environ, "KUBECONFIG": kubeconfig})
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else None), 60)
    assert proc.returncode == 0, f"kubectl {' '.join(args)}: {err.decode()}"
    return out.decode()


@pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed")
@pytest.mark.skipif(bool(os.environ.get("KUBELOOP_TEST_KUBECONFIG")), reason="checks the emulator only")
async def test_kubectl_everyday_commands() -> None:
    async with APIServer(token="t", tls=True) as api:
        kc = api.kubeconfig
        assert "default" in await _kubectl(kc, "get", "namespaces")
        await _kubectl(kc, "create", "configmap", "cfg", "--from-literal=a=b")  # protobuf body
        await _kubectl(kc, "apply", "-f", "-", stdin=DEPLOYMENT)
        await _kubectl(kc, "apply", "--server-side", "-f", "-", stdin=DEPLOYMENT)
        await _kubectl(kc, "scale", "deployment", "web", "--replicas=3")
        await _kubectl(kc, "label", "configmap", "cfg", "x=y")
        dep = json.loads(await _kubectl(kc, "get", "deployment", "web", "-o", "json"))
        assert dep["spec"]["replicas"] == 3 and dep["metadata"]["generation"] == 2
        cfg = json.loads(await _kubectl(kc, "get", "configmap", "cfg", "-o", "json"))
        assert cfg["data"] == {"a": "b"} and cfg["metadata"]["labels"] == {"x": "y"}
        await _kubectl(kc, "delete", "deployment", "web")
        assert "web" not in await _kubectl(kc, "get", "deployments")
