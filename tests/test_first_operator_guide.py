"""docs/first-operator.md and the README's controller are real: their code blocks are extracted and
run, on the emulator or the cluster of KUBELOOP_TEST_KUBECONFIG.

The Python blocks make the guide's two files (each block names its file on its first line); the
guide's own test runs here against the `client`/`namespace` fixtures; its shell commands run as
written (`kubeloop run` as a process, with the test cluster's kubeconfig and no probe ports; a
`kubectl apply` of the CRD and of the Greeting is done with the client, kubectl not being installed
here, and the manifests are checked, not applied: tests/cli/test_manifests.py applies the same
output under RBAC); its YAML is the object created, its TOML the pytest setting this test relies on.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import re
import secrets
import shlex
import signal
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubeloop import Client, Manager
from kubeloop.cli.main import main
from kubeloop.client import ApiError, NotFound
from kubeloop.testing import TestCluster, eventually, install_crd

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "first-operator.md"
KUBELOOP = str(Path(sys.executable).with_name("kubeloop"))
CRD = "apiextensions.k8s.io/v1/CustomResourceDefinition"
GROUP = "example.com"


def blocks(doc: Path = GUIDE, group: str = GROUP) -> list[tuple[str, str]]:
    """(language, text) of every fenced code block of ``doc``, in order, in API group ``group``."""
    text = doc.read_text().replace(f'group="{GROUP}"', f'group="{group}"').replace(
        f"apiVersion: {GROUP}/v1", f"apiVersion: {group}/v1")
    return [(m[1], m[2]) for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S)]


@pytest.fixture
def group(apiserver: TestCluster) -> str:
    """The docs' API group; on a real cluster, one of this test's own (the cluster is shared, and may
    still be deleting the CRD of a previous run)."""
    return GROUP if apiserver.is_emulator else f"kl{secrets.token_hex(3)}.{GROUP}"


def python_files(group: str = GROUP) -> dict[str, str]:
    """The files the Python blocks make: each block's first line names its file (``# greeter.py``)."""
    files: dict[str, str] = {}
    for lang, text in blocks(GUIDE, group):
        if lang == "python":
            name = text.split("\n", 1)[0].removeprefix("# ").split()[0]
            files[name] = files.get(name, "") + text + "\n\n"
    return files


def commands() -> Iterator[str]:
    for lang, text in blocks():
        if lang == "sh":
            yield from (line for line in text.splitlines() if line.strip())


def test_every_block_is_one_this_test_runs() -> None:
    assert {lang for lang, _ in blocks()} == {"python", "sh", "yaml", "toml"}
    assert set(python_files()) == {"greeter.py", "test_greeter.py"}
    toml = next(text for lang, text in blocks() if lang == "toml")
    assert tomllib.loads(toml)["tool"]["pytest"]["ini_options"]["asyncio_mode"] == "auto"  # what this file relies on
    pip = next(c for c in commands() if c.startswith("pip install"))
    extras = re.search(r"kubeloop\[([\w,]+)\]", pip)
    assert extras is not None
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(extras[1].split(",")) <= set(declared)
    known = ("pip install", "python -c", "kubeloop run", "kubectl apply -f greeting.yaml", "kubeloop manifests",
             "kubectl create namespace")
    assert [c for c in commands() if not c.startswith(known)] == []  # a new command needs checking here


@contextlib.contextmanager
def guide_files(tmp_path: Path, group: str) -> Iterator[dict[str, Any]]:
    """The guide's files written in ``tmp_path``, importable while the block runs."""
    for name, text in python_files(group).items():
        (tmp_path / name).write_text(text)
    sys.path.insert(0, str(tmp_path))
    try:
        yield {name: importlib.import_module(name.removesuffix(".py")) for name in python_files()}
    finally:
        sys.path.remove(str(tmp_path))
        for name in python_files():
            sys.modules.pop(name.removesuffix(".py"), None)


async def test_the_guide_runs(apiserver: TestCluster, client: Client, namespace: str, tmp_path: Path,
                              group: str) -> None:
    with guide_files(tmp_path, group) as modules:
        tests = [fn for name, fn in vars(modules["test_greeter.py"]).items() if name.startswith("test_")]
        assert tests
        for test in tests:  # the guide's tests, with this test's fixtures
            await test(client, namespace)
    await client.delete(f"{group}/v1/Greeting", "world", namespace=namespace)  # the commands make it again
    with contextlib.suppress(NotFound):  # the garbage collector may have been first
        await client.delete("v1/ConfigMap", "world-greeting", namespace=namespace)
    await eventually(lambda: gone(client, f"{group}/v1/Greeting", "world", namespace))
    try:
        await run_commands(apiserver, client, namespace, tmp_path, group)
    finally:
        if not apiserver.is_emulator:  # a real cluster is shared: leave no CRD behind
            with contextlib.suppress(ApiError):
                await client.delete(CRD, f"greetings.{group}")


async def gone(client: Client, resource: str, name: str, namespace: str) -> bool:
    try:
        await client.get(resource, name, namespace=namespace)
    except NotFound:
        return True
    return False


def manifests(args: list[str], cwd: Path) -> Any:
    """``kubeloop manifests ARGS`` as typed in ``cwd`` (next to greeter.py), in this process."""
    with contextlib.chdir(cwd):
        try:
            return CliRunner().invoke(main, args, catch_exceptions=False)
        finally:
            sys.modules.pop("greeter", None)


async def run_commands(apiserver: TestCluster, client: Client, namespace: str, tmp_path: Path, group: str) -> None:
    operator: asyncio.subprocess.Process | None = None
    err = b""
    try:
        for command in commands():
            if command.startswith("python -c"):  # ... | kubectl apply -f -
                args = shlex.split(command.split(" | ")[0])
                out = await asyncio.to_thread(subprocess.run, [sys.executable, *args[1:]], cwd=tmp_path,
                                              capture_output=True, text=True, check=True)
                served = await install_crd(client, yaml.safe_load(out.stdout))
                assert served == f"{group}/v1/Greeting"
            elif command.startswith("kubeloop run"):
                args = shlex.split(command)[1:]
                operator = await asyncio.create_subprocess_exec(
                    KUBELOOP, *args, "--kubeconfig", apiserver.kubeconfig, "--namespace", namespace,
                    "--health-port", "0", "--metrics-port", "0", cwd=str(tmp_path),
                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            elif command.startswith("kubectl apply -f greeting.yaml"):
                greeting = yaml.safe_load(next(text for lang, text in blocks(GUIDE, group) if lang == "yaml"))
                await client.create(greeting, namespace=namespace)

                async def greeted(proc: asyncio.subprocess.Process | None = operator) -> bool:
                    assert proc is not None and proc.returncode is None, "kubeloop run exited"
                    try:
                        cm = await client.get("v1/ConfigMap", "world-greeting", namespace=namespace)
                    except NotFound:
                        return False
                    return bool(cm["data"] == {"message": "Hello, World!"})

                await eventually(greeted, timeout=20, what="the ConfigMap of the operator run by kubeloop run")
            elif command.startswith("kubeloop manifests"):
                args = shlex.split(command.split(" > ")[0])[1:]
                result = await asyncio.to_thread(manifests, args, tmp_path)
                assert result.exit_code == 0, result.output
                docs = [d for d in yaml.safe_load_all(result.stdout) if d]
                assert [d["kind"] for d in docs] == ["CustomResourceDefinition", "ServiceAccount", "ClusterRole",
                                                     "ClusterRoleBinding", "Role", "RoleBinding", "Deployment"]
                role = next(d for d in docs if d["kind"] == "ClusterRole")
                assert {"greetings", "greetings/status", "configmaps"} <= {r for rule in role["rules"]
                                                                          for r in rule["resources"]}
                container = docs[-1]["spec"]["template"]["spec"]["containers"][0]
                assert container["image"] == "registry.example.com/greeter:1"
                assert docs[-1]["metadata"]["namespace"] == "greeter"
    finally:
        if operator is not None and operator.returncode is None:
            operator.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(operator.communicate(), 20)
    assert operator is not None and operator.returncode == 0, err.decode()[-2000:]  # a clean stop on SIGTERM


async def test_the_readmes_controller_runs(apiserver: TestCluster, client: Client, namespace: str,
                                          tmp_path: Path, group: str) -> None:
    code = next(text for lang, text in blocks(ROOT / "README.md", group) if lang == "python")
    assert code.startswith("# greeter.py")
    (tmp_path / "greeter.py").write_text(code)
    result = await asyncio.to_thread(manifests, ["manifests", "greeter.py"], tmp_path)  # as the README says
    assert result.exit_code == 0, result.output
    crd = next(d for d in yaml.safe_load_all(result.stdout) if d and d["kind"] == "CustomResourceDefinition")
    await install_crd(client, crd)
    sys.path.insert(0, str(tmp_path))
    try:
        greeter = importlib.import_module("greeter")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("greeter", None)
    try:
        manager = Manager(client)
        manager.add(*greeter.controllers)
        async with manager:
            await client.create({"apiVersion": f"{group}/v1", "kind": "Greeting", "metadata": {"name": "readme"},
                                 "spec": {"name": "README"}}, namespace=namespace)

            async def greeted() -> bool:
                try:
                    cm = await client.get("v1/ConfigMap", "readme-greeting", namespace=namespace)
                except NotFound:
                    return False
                return bool(cm["data"] == {"message": "Hello, README!"})

            await eventually(greeted)
    finally:
        if not apiserver.is_emulator:
            with contextlib.suppress(ApiError):
                await client.delete(CRD, f"greetings.{group}")


def test_the_guides_pytest_configuration_runs_async_tests_without_warnings(tmp_path: Path) -> None:
    """The guide's `[tool.pytest.ini_options]`, as a user's project would have it: pytest-asyncio runs an
    async test and warns about nothing (without the loop scope setting it warns on every run)."""
    toml = next(text for lang, text in blocks() if lang == "toml")
    (tmp_path / "pyproject.toml").write_text(toml)
    (tmp_path / "test_async.py").write_text("async def test_runs() -> None:\n    assert True\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-W", "error::pytest.PytestDeprecationWarning"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr
    assert "warning" not in done.stdout.lower(), done.stdout
