"""`kubeloop demo`: the README's main job: a real controller at work, with no cluster.

It starts the embedded API server emulator (TLS and a bearer token, as a real cluster has),
installs the WebApp CRD, runs the WebApp controller from ``examples/webapp`` in a `Manager`, and
then drives it: create a WebApp, scale it, delete one of its children by hand, leave it alone,
delete it. Everything the controller does is printed as it happens (its reconciles, from the
controller; children and status, from watches on the API server), and every step is checked:
the exit code is 1 if the controller misbehaved (a child missing or wrong, no repair, writes in
steady state, no garbage collection). It takes a few seconds.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import click

from kubeloop.client import Client, NotFound
from kubeloop.controller import Context, Controller, Request, Result
from kubeloop.manager import Manager
from kubeloop.meta import ADDED, DELETED, MODIFIED
from kubeloop.testing import APIServer, install_crd

NS = "demo"
APP = "shop"
WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")
STEP_TIMEOUT = 10.0
STEADY_SECONDS = 2.0


class DemoFailed(Exception):
    """A step's check failed: the controller misbehaved."""


def load_example() -> ModuleType:
    """``examples/webapp/controller.py`` from the source tree (or an importable ``examples``)."""
    from kubeloop.manager import load_target

    path = Path(__file__).resolve().parents[2] / "examples" / "webapp" / "controller.py"
    if path.is_file():
        return load_target(str(path))
    return importlib.import_module("examples.webapp.controller")


class Narrator:
    """Prints timestamped lines and remembers what it saw (for the checks)."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.reconciles = 0
        self.deleted: set[tuple[str, str]] = set()
        self.repaired: list[str] = []

    def say(self, text: str, *, stamp: bool = True) -> None:
        prefix = f"[{time.monotonic() - self.t0:5.2f}s] " if stamp else ""
        click.echo(prefix + text)
        sys.stdout.flush()

    def step(self, text: str) -> None:
        click.echo("")
        self.say(f"== {text}", stamp=False)


def _summary(kind: str, etype: str, obj: Mapping[str, Any], prev: Mapping[str, Any] | None) -> str | None:
    meta = obj.get("metadata") or {}
    name = f"{meta.get('namespace')}/{meta.get('name')}"
    if etype == ADDED:
        extra = f" (replicas {obj['spec'].get('replicas')})" if kind == "Deployment" else ""
        return f"+ {kind} {name} created{extra}"
    if etype == DELETED:
        return f"- {kind} {name} deleted"
    if prev is None:
        return None
    if kind == "WebApp":
        if obj.get("status") != prev.get("status"):
            st = obj.get("status") or {}
            return (f"  status written: replicas={st.get('replicas')} configMap={st.get('configMap')} "
                    f"observedGeneration={st.get('observedGeneration')}")
        if obj.get("spec") != prev.get("spec"):
            return f"~ WebApp {name} spec changed (generation {meta.get('generation')})"
        return None
    if kind == "Deployment" and obj.get("spec") != prev.get("spec"):
        return f"~ Deployment {name} updated (replicas {obj['spec'].get('replicas')})"
    if kind == "ConfigMap" and obj.get("data") != prev.get("data"):
        return f"~ ConfigMap {name} updated"
    return None


async def _watch(client: Client, resource: str, kind: str, narrator: Narrator, ready: asyncio.Event) -> None:
    listed = await client.list(resource, namespace=NS)
    last: dict[str, Mapping[str, Any]] = {o["metadata"]["name"]: o for o in listed.items}
    async with client.watch(resource, namespace=NS, resource_version=listed.resource_version) as stream:
        ready.set()
        async for ev in stream:
            if ev.type not in (ADDED, MODIFIED, DELETED):
                continue
            name = ev.object["metadata"]["name"]
            line = _summary(kind, ev.type, ev.object, last.get(name))
            if ev.type == DELETED:
                last.pop(name, None)
                narrator.deleted.add((kind, name))
            else:
                last[name] = ev.object
                if ev.type == ADDED and (kind, name) in narrator.deleted:
                    narrator.deleted.discard((kind, name))
                    narrator.repaired.append(f"{kind}/{name}")
                    line = f"{line} (repaired)" if line else line
            if line:
                narrator.say("    " + line.strip())


def traced(controller: Controller, narrator: Narrator) -> Controller:
    """Print every reconcile of ``controller`` as it starts."""
    inner = controller.spec.reconcile

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        narrator.reconciles += 1
        gone = "" if ctx.get() is not None else " (gone: nothing to do, the garbage collector has the children)"
        narrator.say(f"  reconcile {req.namespace}/{req.name}{gone}")
        return await inner(req, ctx)

    return Controller.from_spec(dataclasses.replace(controller.spec, reconcile=reconcile))


async def _until(what: str, check: Callable[[], Awaitable[bool]]) -> None:
    try:
        async with asyncio.timeout(STEP_TIMEOUT):
            while True:
                if await check():
                    return
                await asyncio.sleep(0.02)
    except TimeoutError:
        raise DemoFailed(f"{what}: not seen within {STEP_TIMEOUT:g}s") from None


def _writes(server: APIServer) -> int:
    return sum(n for key, n in server.stats()["requests"].items() if key.split(" ", 1)[0] in WRITE_VERBS)


async def _scenario(server: APIServer, client: Client, example: ModuleType, narrator: Narrator) -> None:
    from kubeloop.resources import crd  # the example's typed WebApp has already imported pydantic

    webapp, definition = example.WebApp.resource(), crd(example.WebApp)
    await install_crd(client, definition)
    narrator.say(f"installed CRD {definition['metadata']['name']}")
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    controller = traced(example.make_controller(), narrator)
    manager = Manager(client, health_port=0, bind_address="127.0.0.1", metrics_port=0)
    manager.add(controller)
    ready = [asyncio.Event() for _ in range(3)]
    async with manager, asyncio.TaskGroup() as tg:
        watchers = [tg.create_task(_watch(client, r, k, narrator, ev)) for (r, k), ev in zip(
            ((webapp, "WebApp"), ("v1/ConfigMap", "ConfigMap"), ("apps/v1/Deployment", "Deployment")), ready,
            strict=True)]
        for ev in ready:
            await ev.wait()
        if not await manager.wait_ready(STEP_TIMEOUT):
            raise DemoFailed(f"the manager did not become ready: {'; '.join(manager.readiness())}")
        narrator.say(f"manager ready: controller 'webapp' (for WebApp, owns ConfigMap and Deployment); "
                     f"{manager.health_url}/readyz says ok")
        try:
            await _drive(server, client, controller, webapp, narrator)
        finally:
            for w in watchers:
                w.cancel()
        narrator.step("metrics (GET /metrics, Prometheus text)")
        await _show_metrics(manager, narrator)


async def _drive(server: APIServer, client: Client, controller: Controller, webapp: str, narrator: Narrator) -> None:
    async def get(resource: str, name: str) -> dict[str, Any] | None:
        try:
            return await client.get(resource, name, namespace=NS)
        except NotFound:
            return None

    async def observed(generation: int, replicas: int) -> bool:
        app = await get(webapp, APP)
        st = (app or {}).get("status") or {}
        dep = await get("apps/v1/Deployment", APP)
        page = await get("v1/ConfigMap", f"{APP}-content")
        return (st.get("observedGeneration") == generation and st.get("replicas") == replicas
                and dep is not None and dep["spec"]["replicas"] == replicas and page is not None
                and page["data"].get("index.html") == "<h1>welcome</h1>\n")

    narrator.step(f"1. create WebApp {NS}/{APP} (image nginx:1.27, replicas 2)")
    await client.create({"apiVersion": webapp.rpartition("/")[0], "kind": "WebApp",
                         "metadata": {"name": APP, "namespace": NS},
                         "spec": {"image": "nginx:1.27", "replicas": 2, "message": "welcome"}})
    await _until("children created and status written", lambda: observed(1, 2))

    narrator.step("2. scale it to 3 replicas (kubectl edit)")
    app = await client.get(webapp, APP, namespace=NS)
    app["spec"]["replicas"] = 3
    await client.replace(app)
    await _until("Deployment scaled and status updated", lambda: observed(2, 3))

    narrator.step(f"3. delete the child ConfigMap {APP}-content by hand")
    await client.delete("v1/ConfigMap", f"{APP}-content", namespace=NS)
    await _until("ConfigMap repaired", lambda: observed(2, 3))
    await _until("repair seen by the watch", _async(lambda: f"ConfigMap/{APP}-content" in narrator.repaired))

    narrator.step(f"4. steady state: {STEADY_SECONDS:g} s, with 5 reconciles forced by hand")
    await asyncio.sleep(0.2)
    writes, runs = _writes(server), narrator.reconciles
    for _ in range(5):
        controller.enqueue(Request("default", NS, APP))
        await asyncio.sleep(STEADY_SECONDS / 5)
    wrote = _writes(server) - writes
    runs = narrator.reconciles - runs
    narrator.say(f"  {runs} reconciles, {wrote} writes to the API server"
                 + (" (every apply skipped: the cache showed it would change nothing)" if wrote == 0 else ""))
    if wrote or runs < 5:
        raise DemoFailed(f"steady state: {runs} reconciles made {wrote} writes (expected >= 5 and 0)")

    narrator.step(f"5. delete WebApp {NS}/{APP}: its children go with it (ownerReferences)")
    await client.delete(webapp, APP, namespace=NS)

    async def collected() -> bool:
        return await get("apps/v1/Deployment", APP) is None and await get("v1/ConfigMap", f"{APP}-content") is None

    await _until("children garbage-collected", collected)
    await asyncio.sleep(0.1)  # let the last watch lines arrive


def _async(fn: Callable[[], bool]) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return fn()

    return check


async def _show_metrics(manager: Manager, narrator: Narrator) -> None:
    import aiohttp

    async with aiohttp.ClientSession() as session, session.get(f"{manager.metrics_url}/metrics") as resp:
        text = await resp.text()
    wanted = ('controller_runtime_reconcile_total{controller="webapp",result="success"}',
              'controller_runtime_reconcile_errors_total{controller="webapp"}',
              'workqueue_adds_total{controller="webapp",name="webapp"}')
    for line in text.splitlines():
        if line.rsplit(" ", 1)[0] in wanted:
            narrator.say(f"  {line}", stamp=False)


#: the extra that installs each optional module the demo's example needs
EXTRAS = {"pydantic": "resources", "pydantic_core": "resources", "cryptography": "testing", "pytest": "testing",
          "pytest_asyncio": "testing"}
DEMO_INSTALL = "pip install 'kubeloop[testing,resources]'"


def _missing_module(exc: BaseException | None) -> str | None:
    """The module a `ModuleNotFoundError` in ``exc``'s chain of causes names (loading wraps it)."""
    while exc is not None:
        if isinstance(exc, ModuleNotFoundError) and exc.name:
            return exc.name
        exc = exc.__cause__
    return None


async def run_demo() -> int:
    """Run the demo; 0 when the controller did everything right, 1 otherwise."""
    narrator = Narrator()
    try:
        example = load_example()
    except Exception as exc:
        missing = _missing_module(exc)
        extra = EXTRAS.get(missing.split(".")[0]) if missing else None
        if extra is not None:
            narrator.say(f"the demo's example (examples/webapp, a typed resource) needs {missing}, from the "
                         f"{extra!r} extra: {DEMO_INSTALL} (in a kubeloop checkout: pip install -e "
                         "'.[testing,resources]')")
            return 1
        narrator.say(f"cannot load the example controller examples/webapp: {exc} (run from a kubeloop checkout)")
        return 1
    narrator.say("kubeloop demo: the WebApp controller (examples/webapp/controller.py) on the embedded "
                 "API server emulator", stamp=False)
    failures: list[str] = []
    try:
        async with APIServer(token="demo-token", tls=True) as server:
            narrator.say(f"emulator: {server.url} (TLS, bearer token); kubeconfig {server.kubeconfig}")
            async with await Client.from_kubeconfig(server.kubeconfig) as client:
                await _scenario(server, client, example, narrator)
    except* DemoFailed as group:
        failures = [str(exc) for exc in group.exceptions]
    if failures:
        for failure in failures:
            narrator.say(f"FAILED: {failure}")
        narrator.say("demo finished: FAILED", stamp=False)
        return 1
    total = time.monotonic() - narrator.t0
    click.echo("")
    narrator.say(f"demo finished: OK ({narrator.reconciles} reconciles, {total:.1f} s)", stamp=False)
    return 0


@click.command()
def demo() -> None:
    """Run an example controller on an embedded API server emulator and show it working."""
    sys.exit(asyncio.run(run_demo()))
