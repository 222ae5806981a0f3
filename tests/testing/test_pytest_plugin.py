"""The pytest plugin's fixtures (`kubeloop.testing.pytest_plugin`), as a kubeloop user gets them."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import aiohttp
import pytest

from kubeloop import Client
from kubeloop.client import ApiError
from kubeloop.config import load_kubeconfig
from kubeloop.testing import APIServer, TestCluster
from kubeloop.testing.pytest_plugin import MODE_ENV, TEST_RETRY
from tests.testing.conftest import Http

REPO = Path(__file__).resolve().parents[2]


async def test_plugin_fixture_gives_a_fresh_cluster(apiserver: TestCluster) -> None:
    assert apiserver.require_faults() is apiserver.faults  # skips on a real cluster
    assert apiserver.is_emulator
    async with aiohttp.ClientSession() as s:
        http = Http(s, apiserver.url, apiserver.token)
        code, _ = await http.get("/api/v1/namespaces/default/configmaps")
        assert code == 200
    assert apiserver.stats()["requests"] == {"list core/v1/configmaps": 1}


async def test_emulator_fixture_is_the_server_the_client_talks_to(
        apiserver: TestCluster, emulator: APIServer, client: Client) -> None:
    assert apiserver.server is emulator and apiserver.faults is emulator.faults
    emulator.faults.fail_next(TEST_RETRY.max_attempts, 503)  # more failures than the client retries
    with pytest.raises(ApiError) as err:
        await client.get("v1/Namespace", "default")
    assert err.value.code == 503
    assert (await client.get("v1/Namespace", "default"))["metadata"]["name"] == "default"


async def test_fixture_mode_follows_the_environment(emulator: APIServer) -> None:
    assert emulator.bare == (os.environ.get(MODE_ENV) == "bare")


async def test_client_fixture_is_connected_to_the_apiserver_fixture(apiserver: TestCluster, client: Client) -> None:
    assert client.transport.retry is TEST_RETRY and client.transport.limiter is None
    created = await client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": "from-fixture", "namespace": "default"}})
    try:
        async with apiserver.client(qps=None) as other:  # a second client on the same cluster sees it
            got = await other.get("v1/ConfigMap", "from-fixture", namespace="default")
        assert got["metadata"]["uid"] == created["metadata"]["uid"]
    finally:
        await client.delete("v1/ConfigMap", "from-fixture", namespace="default")


async def test_namespace_fixture_is_fresh_and_usable(client: Client, namespace: str) -> None:
    assert namespace.startswith("kl-test-")
    assert (await client.get("v1/Namespace", namespace))["status"]["phase"] == "Active"
    # nothing of anyone else's: at most what a cluster puts in every new namespace
    names = {cm["metadata"]["name"] for cm in (await client.list("v1/ConfigMap", namespace=namespace)).items}
    assert names <= {"kube-root-ca.crt"}


def _pytest_in(tmp_path: Path, test_source: str) -> subprocess.CompletedProcess[str]:
    """A user's pytest run in a directory of its own, pytest-asyncio not importable (kubeloop's pytest11
    plugin is loaded from the installed entry point, importing this checkout through PYTHONPATH)."""
    hidden = tmp_path / "hide"
    hidden.mkdir()
    (hidden / "pytest_asyncio.py").write_text("raise ImportError('pytest_asyncio is not installed')\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_user.py").write_text(textwrap.dedent(test_source))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(hidden), str(REPO)]))
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:asyncio", "-p", "no:cacheprovider", "-q",
                           "test_user.py"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=60)


def test_plugin_never_breaks_an_unrelated_run_without_pytest_asyncio(tmp_path: Path) -> None:
    run = _pytest_in(tmp_path, """
        def test_unrelated():
            assert 1 + 1 == 2
        """)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout


def test_plugin_fixture_without_pytest_asyncio_says_what_to_install(tmp_path: Path) -> None:
    run = _pytest_in(tmp_path, """
        def test_wants_a_cluster(apiserver):
            pass
        """)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "pip install 'kubeloop[testing]'" in run.stdout


async def test_a_run_on_a_real_cluster_deletes_the_crds_it_installed(tmp_path: Path) -> None:
    """Issue 31 item 17: the CRDs `install_crd` created are deleted when the run ends, after every
    xdist worker (two files here, one per worker, install the same CRD); one that existed is kept.
    An emulator stands in for the real cluster (KUBELOOP_TEST_KUBECONFIG names it)."""
    from kubeloop.testing.pytest_plugin import CRD_LEDGER_ENV, ENV

    test = textwrap.dedent("""
        from kubeloop.testing import install_crd

        def crd(plural, kind):
            return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                    "metadata": {"name": f"{plural}.ledger.example.com"},
                    "spec": {"group": "ledger.example.com", "scope": "Namespaced",
                             "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                                 "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}

        async def test_installs(client):
            assert await install_crd(client, crd("shareds", "Shared")) == "ledger.example.com/v1/Shared"
            await install_crd(client, crd("olds", "Old"))
            await install_crd(client, crd("kepts", "Kept"), keep=True)
        """)
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_one.py").write_text(test)
    (project / "test_two.py").write_text(test)
    async with APIServer() as api, Client(load_kubeconfig(api.kubeconfig), qps=None) as admin:
        old = "olds.ledger.example.com"
        await admin.create({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                            "metadata": {"name": old}, "spec": {
                                "group": "ledger.example.com", "scope": "Namespaced",
                                "names": {"plural": "olds", "singular": "old", "kind": "Old"},
                                "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                                    "openAPIV3Schema": {"type": "object"}}}]}})
        env = {k: v for k, v in os.environ.items() if k != CRD_LEDGER_ENV}
        env.update({ENV: str(api.kubeconfig), "PYTHONPATH": str(REPO)})
        run = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "2",
                             "--dist", "loadfile", "-o", "asyncio_mode=auto",
                             "-o", "asyncio_default_fixture_loop_scope=function"],
            cwd=project, env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "2 passed" in run.stdout
        left = {c["metadata"]["name"] for c in (await admin.list(
            "apiextensions.k8s.io/v1/CustomResourceDefinition")).items if "ledger" in c["metadata"]["name"]}
        assert left == {old, "kepts.ledger.example.com"}  # the pre-existing one and keep=True stay
