"""Exec credential plugins, with a small Python script as the plugin."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubeloop.client import Client, RequestTimeoutError, RetryPolicy
from kubeloop.config import ExecAuth, ExecPluginError, ExecPluginTimeout, load_kubeconfig
from kubeloop.testing import TestCluster, eventually

PLUGIN = r'''
import json, os, sys, datetime as dt
state = sys.argv[1]
with open(state, "a") as fh:
    fh.write(json.dumps({"info": json.loads(os.environ["KUBERNETES_EXEC_INFO"]), "argv": sys.argv[2:],
                         "env": os.environ.get("PLUGIN_COLOR")}) + "\n")
runs = sum(1 for _ in open(state))
mode = os.environ.get("PLUGIN_MODE", "token")
if mode == "hang" or (mode == "hang-on-refresh" and runs > 1):
    with open(state + ".pid", "w") as fh:
        fh.write(str(os.getpid()))
    import time
    time.sleep(3600)
if mode == "fail":
    print("warning: something", file=sys.stderr)
    print("login required: run `cloud auth login`", file=sys.stderr)
    sys.exit(3)
if mode == "garbage":
    print("not json")
    sys.exit(0)
status = {}
if mode == "cert":
    status["clientCertificateData"] = open(os.environ["CERT"]).read()
    status["clientKeyData"] = open(os.environ["KEY"]).read()
else:
    status["token"] = f"token-{runs}"
ttl = float(os.environ.get("PLUGIN_TTL", "3600"))
if ttl >= 0:
    exp = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=ttl)
    status["expirationTimestamp"] = exp.strftime("%Y-%m-%dT%H:%M:%SZ")
api = os.environ.get("PLUGIN_API", "client.authentication.k8s.io/v1")
print(json.dumps({"apiVersion": api, "kind": "ExecCredential", "status": status}))
'''


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    path = tmp_path / "plugin.py"
    path.write_text(PLUGIN)
    return path


def runs_of(state: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in state.read_text().splitlines()] if state.exists() else []


def exec_kubeconfig(tmp_path: Path, plugin: Path, *, env: dict[str, str] | None = None,
                    api: str = "client.authentication.k8s.io/v1", provide_cluster_info: bool = True,
                    extra: dict[str, Any] | None = None) -> Path:
    spec: dict[str, Any] = {
        "apiVersion": api, "command": sys.executable, "args": [str(plugin), str(tmp_path / "state"), "--flag"],
        "env": [{"name": k, "value": v} for k, v in (env or {}).items()],
        "interactiveMode": "Never", "provideClusterInfo": provide_cluster_info,
        "installHint": "install the cloud CLI",
    }
    spec.update(extra or {})
    doc = {
        "apiVersion": "v1", "kind": "Config", "current-context": "x",
        "clusters": [{"name": "c", "cluster": {
            "server": "https://exec.example:6443", "certificate-authority-data": base64.b64encode(b"CA").decode(),
            "extensions": [{"name": "client.authentication.k8s.io/exec", "extension": {"audience": "kube"}}]}}],
        "users": [{"name": "u", "user": {"exec": spec}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


async def test_exec_token_cached_until_expiry(tmp_path: Path, plugin: Path) -> None:
    cfg = load_kubeconfig(exec_kubeconfig(tmp_path, plugin, env={"PLUGIN_COLOR": "blue"}))
    auth = cfg.auth
    assert isinstance(auth, ExecAuth)
    first = await auth.credentials()
    second = await auth.credentials()
    assert first.token == second.token == "token-1"
    assert auth.runs == 1
    [run] = runs_of(tmp_path / "state")
    assert run["argv"] == ["--flag"]
    assert run["env"] == "blue"
    info = run["info"]
    assert info["apiVersion"] == "client.authentication.k8s.io/v1" and info["kind"] == "ExecCredential"
    assert info["spec"]["interactive"] is False
    assert info["spec"]["cluster"] == {
        "server": "https://exec.example:6443",
        "certificate-authority-data": base64.b64encode(b"CA").decode(),
        "config": {"audience": "kube"},
    }


async def test_exec_reruns_after_401(tmp_path: Path, plugin: Path) -> None:
    auth = load_kubeconfig(exec_kubeconfig(tmp_path, plugin)).auth
    assert (await auth.credentials()).token == "token-1"
    auth.invalidate()
    assert (await auth.credentials()).token == "token-2"


async def test_exec_reruns_when_expired(tmp_path: Path, plugin: Path) -> None:
    # expires within the refresh skew: every request needs a fresh credential
    auth = load_kubeconfig(exec_kubeconfig(tmp_path, plugin, env={"PLUGIN_TTL": "1"})).auth
    assert (await auth.credentials()).token == "token-1"
    assert (await auth.credentials()).token == "token-2"


async def test_exec_without_expiry_is_kept(tmp_path: Path, plugin: Path) -> None:
    auth = load_kubeconfig(exec_kubeconfig(tmp_path, plugin, env={"PLUGIN_TTL": "-1"})).auth
    assert (await auth.credentials()).token == "token-1"
    assert (await auth.credentials()).token == "token-1"


async def test_exec_concurrent_callers_share_one_run(tmp_path: Path, plugin: Path) -> None:
    import asyncio
    auth = load_kubeconfig(exec_kubeconfig(tmp_path, plugin)).auth
    results = await asyncio.gather(*(auth.credentials() for _ in range(5)))
    assert {r.token for r in results} == {"token-1"}
    assert len(runs_of(tmp_path / "state")) == 1


async def test_exec_v1beta1_without_cluster_info(tmp_path: Path, plugin: Path) -> None:
    api = "client.authentication.k8s.io/v1beta1"
    auth = load_kubeconfig(exec_kubeconfig(tmp_path, plugin, api=api, env={"PLUGIN_API": api},
                                           provide_cluster_info=False, extra={"interactiveMode": None})).auth
    assert (await auth.credentials()).token == "token-1"
    info = runs_of(tmp_path / "state")[0]["info"]
    assert info["apiVersion"] == api and "cluster" not in info["spec"]


async def test_exec_client_certificate(tmp_path: Path, plugin: Path, pki: Any) -> None:
    (tmp_path / "c.crt").write_bytes(pki.client_cert_pem)
    (tmp_path / "c.key").write_bytes(pki.client_key_pem)
    auth = load_kubeconfig(exec_kubeconfig(tmp_path, plugin, env={
        "PLUGIN_MODE": "cert", "CERT": str(tmp_path / "c.crt"), "KEY": str(tmp_path / "c.key")})).auth
    creds = await auth.credentials()
    assert creds.client_cert == pki.client_cert_pem and creds.client_key == pki.client_key_pem
    assert creds.token is None


async def test_exec_failure_is_one_line(tmp_path: Path, plugin: Path) -> None:
    path = exec_kubeconfig(tmp_path, plugin, env={"PLUGIN_MODE": "fail"})
    auth = load_kubeconfig(path).auth
    with pytest.raises(ExecPluginError) as exc:
        await auth.credentials()
    text = str(exc.value)
    assert "\n" not in text
    assert text.startswith(str(path))
    assert "exited with code 3: login required: run `cloud auth login`" in text


async def test_exec_garbage_output(tmp_path: Path, plugin: Path) -> None:
    auth = load_kubeconfig(exec_kubeconfig(tmp_path, plugin, env={"PLUGIN_MODE": "garbage"})).auth
    with pytest.raises(ExecPluginError, match="printed invalid JSON"):
        await auth.credentials()


async def test_exec_wrong_api_version_in_output(tmp_path: Path, plugin: Path) -> None:
    auth = load_kubeconfig(exec_kubeconfig(tmp_path, plugin,
                                           env={"PLUGIN_API": "client.authentication.k8s.io/v1beta1"})).auth
    with pytest.raises(ExecPluginError, match="returned apiVersion"):
        await auth.credentials()


async def test_exec_missing_command_shows_install_hint(tmp_path: Path, plugin: Path) -> None:
    auth = load_kubeconfig(exec_kubeconfig(tmp_path, plugin, extra={"command": str(tmp_path / "no-such-plugin")})).auth
    with pytest.raises(ExecPluginError, match="install the cloud CLI"):
        await auth.credentials()


def test_exec_v1_requires_interactive_mode(tmp_path: Path, plugin: Path) -> None:
    with pytest.raises(ExecPluginError, match="interactiveMode is required"):
        load_kubeconfig(exec_kubeconfig(tmp_path, plugin, extra={"interactiveMode": None}))


def test_exec_unsupported_api_version(tmp_path: Path, plugin: Path) -> None:
    with pytest.raises(ExecPluginError, match="v1alpha1"):
        load_kubeconfig(exec_kubeconfig(tmp_path, plugin, api="client.authentication.k8s.io/v1alpha1"))


async def test_exec_always_mode_without_terminal(tmp_path: Path, plugin: Path) -> None:
    auth = load_kubeconfig(exec_kubeconfig(tmp_path, plugin, extra={"interactiveMode": "Always"})).auth
    if sys.stdin is not None and sys.stdin.isatty():
        pytest.skip("stdin is a terminal")
    with pytest.raises(ExecPluginError, match="needs an interactive terminal"):
        await auth.credentials()


def test_expiration_timestamp_parsing() -> None:
    from kubeloop.config._exec_plugin import parse_timestamp
    when = dt.datetime(2030, 1, 2, 3, 4, 5, tzinfo=dt.UTC).timestamp()
    assert parse_timestamp("2030-01-02T03:04:05Z") == when
    assert parse_timestamp("2030-01-02T04:04:05+01:00") == when


def _gone(pid_file: Path) -> bool:
    try:
        os.kill(int(pid_file.read_text()), 0)
    except ProcessLookupError:
        return True
    return False


async def test_exec_plugin_that_never_exits_times_out_at_start_up(tmp_path: Path, plugin: Path) -> None:
    """Issue 11 item 10: a clear typed error instead of a silent hang; the plugin is killed."""
    auth = load_kubeconfig(exec_kubeconfig(tmp_path, plugin, env={"PLUGIN_MODE": "hang"}), exec_timeout=0.5).auth
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(ExecPluginTimeout, match=r"did not exit within 0.5s"):
        await asyncio.wait_for(auth.credentials(), 10)
    assert loop.time() - started < 5
    assert _gone(tmp_path / "state.pid")


async def test_exec_plugin_that_hangs_on_refresh_times_out(tmp_path: Path, plugin: Path) -> None:
    env = {"PLUGIN_MODE": "hang-on-refresh", "PLUGIN_TTL": "1"}
    auth = load_kubeconfig(exec_kubeconfig(tmp_path, plugin, env=env), exec_timeout=0.5).auth
    assert (await auth.credentials()).token == "token-1"
    with pytest.raises(ExecPluginTimeout):
        await asyncio.wait_for(auth.credentials(), 10)  # expired (TTL 1 s < skew): refresh
    assert _gone(tmp_path / "state.pid")


async def test_fetching_credentials_counts_against_the_request_timeout(tmp_path: Path, plugin: Path,
                                                                        apiserver: TestCluster) -> None:
    """A request whose exec plugin hangs fails with the request's own timeout, over real HTTP."""
    path = exec_kubeconfig(tmp_path, plugin, env={"PLUGIN_MODE": "hang"})
    doc = yaml.safe_load(path.read_text())
    doc["clusters"][0]["cluster"] = {"server": apiserver.url}
    path.write_text(yaml.safe_dump(doc))
    loop = asyncio.get_running_loop()
    async with Client(load_kubeconfig(path), timeout=1.0, retry=RetryPolicy(max_attempts=1)) as client:
        started = loop.time()
        with pytest.raises(RequestTimeoutError, match="fetching credentials"):
            await asyncio.wait_for(client.list("v1/ConfigMap", namespace="default"), 20)
        assert loop.time() - started < 5  # not the exec plugin's 60 s
    await asyncio.sleep(0.2)
    assert _gone(tmp_path / "state.pid")


WRAPPER = """#!/bin/sh
# a wrapper plugin, as cloud CLIs ship: a child that outlives it holds stdout and stderr
sleep 30 &
echo $! > "$1"
wait
"""


def _alive(pid: int) -> bool:
    """True if ``pid`` runs (a zombie, killed but not yet reaped by its new parent, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@pytest.mark.parametrize("when", ["start-up", "a request gives up"])
async def test_a_wrapper_plugin_whose_child_holds_the_pipes_is_killed_whole(
        tmp_path: Path, when: str) -> None:
    """On timeout the plugin's whole process group is killed and its pipes are not waited for: a
    grandchild holding them (``sleep 30 &``) made the kill wait forever and stay behind."""
    script = tmp_path / "wrapper.sh"
    script.write_text(WRAPPER)
    script.chmod(0o755)
    pid_file = tmp_path / "sleep.pid"
    path = exec_kubeconfig(tmp_path, script, extra={"command": str(script), "args": [str(pid_file)]})
    auth = load_kubeconfig(path, exec_timeout=0.5 if when == "start-up" else 60).auth
    loop = asyncio.get_running_loop()
    started = loop.time()
    if when == "start-up":
        with pytest.raises(ExecPluginTimeout, match=r"did not exit within 0.5s"):
            await asyncio.wait_for(auth.credentials(), 10)
    else:  # the caller's own deadline (the client's request timeout) cancels the run
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(auth.credentials(), 0.5)
    assert loop.time() - started < 5, "waited for the pipes a grandchild holds"
    pid = int(pid_file.read_text())
    await eventually(lambda: not _alive(pid), timeout=2, what=f"the plugin's child {pid} killed")
