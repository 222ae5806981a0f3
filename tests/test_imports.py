"""What importing kubeloop costs at start-up (issue 15: process start and imports are what a user
waits for): heavy dependencies are imported when first needed, not with the modules that might
need them. Each check runs in a fresh interpreter, and each also shows the module named does get
imported once it is needed (so a misspelt or renamed module cannot make it pass)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

LAZY = ("prometheus_client", "http.server", "yaml", "ctypes", "difflib", "aiohttp.web", "zstandard")
"""Not imported by ``import kubeloop.cache, kubeloop.client`` (an Informer outside a Manager)."""

SCRAPE = """
import asyncio, aiohttp
from kubeloop.manager._probes import ProbeServer
async def scrape() -> None:
    server = ProbeServer(health_port=None, metrics_port=0, host="127.0.0.1", readiness=list, liveness=list)
    await server.start()
    async with aiohttp.ClientSession() as session, session.get(f"{server.metrics_url}/metrics") as resp:
        assert resp.status == 200 and resp.content_type == "text/plain"  # what kubeloop.metrics serves
    await server.stop()
asyncio.run(scrape())
"""
"""A Manager's metrics endpoint, started and scraped once."""

STORE = """
from kubeloop.cache import Store
store = Store()
for i in range(20):
    store.apply({"metadata": {"name": f"c{i}", "namespace": "n", "uid": f"u{i}", "resourceVersion": str(i + 1)}})
"""
"""A store (default codec) given enough objects to learn its dictionary."""

KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


def loaded_after(*steps: str) -> list[list[str]]:
    """Run ``steps`` in a fresh interpreter; after each, which of `LAZY` are in ``sys.modules``."""
    lines = ["import json, sys", "seen = []"]
    for step in steps:
        lines += [step, f"seen.append(sorted(m for m in {LAZY!r} if m in sys.modules))"]
    lines.append("print(json.dumps(seen))")
    out = subprocess.run([sys.executable, "-c", "\n".join(lines)], capture_output=True, text=True, check=True)
    return list(json.loads(out.stdout))


def test_cache_and_client_import_none_of_the_heavy_dependencies(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    imported, configured, registry, stored = loaded_after(
        "import kubeloop.cache, kubeloop.client",
        f"import kubeloop.config; kubeloop.config.load_kubeconfig({str(path)!r})",
        "import kubeloop.metrics; kubeloop.metrics.REGISTRY",
        STORE,
    )
    assert imported == []
    assert configured == ["yaml"]  # the kubeconfig is parsed: now PyYAML is needed
    assert {"prometheus_client", "http.server"} <= set(registry)  # the registry exists: so does prometheus_client
    assert "zstandard" in stored  # the default codec learnt its dictionary: now zstandard is needed


def test_the_manager_imports_its_web_server_and_prometheus_client_when_metrics_are_served() -> None:
    imported, scraped = loaded_after("import kubeloop.manager", SCRAPE)
    assert imported == []
    assert {"aiohttp.web", "prometheus_client"} <= set(scraped)


def test_the_lazily_created_registry_holds_every_family_and_serves_those_with_samples() -> None:
    code = ("import kubeloop.manager, kubeloop.metrics as m; print(*sorted({f.name for f in m.REGISTRY.collect()}));"
            "print(m.exposition()[0].decode())")
    names, text = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout.split("\n", 1)
    assert set(names.split()) >= {  # counters by their family name (without _total)
        "workqueue_depth", "workqueue_adds", "controller_runtime_reconcile",
        "controller_runtime_reconcile_time_seconds", "kubeloop_controller_read_your_writes_waits",
        "kubeloop_controller_events_dropped", "kubeloop_cache_object_errors",
        "kubeloop_cache_informers_open", "kubeloop_cache_informers_collected", "kubeloop_shard_members",
        "leader_election_master_status", "leader_election_slowpath", "rest_client_requests",
        "rest_client_request_duration_seconds",
    }
    # as controller-runtime's /metrics (client_golang): a labelled family no one has set yet, such as
    # the leader's status without leader election, is not served, not even as # HELP / # TYPE lines
    assert "leader_election_master_status" not in text and "rest_client_requests" not in text
    assert "# TYPE process_" not in text and text.strip() == "", text
