"""Test kit helpers for operator tests that run on the emulator and on a real cluster alike.

A cluster is eventually consistent (caches, controllers, the garbage collector), so a test waits
for the state it cares about with `eventually` instead of sleeping; `install_crd` creates a
CustomResourceDefinition and waits until the API serves its kind, as `kubectl apply` followed by
`kubectl wait --for condition=established` would.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import time
import traceback
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar, overload

from kubeloop.client import ALL_NAMESPACES, AlreadyExists, Client, NotFound, UnknownResource

T = TypeVar("T")

__all__ = ["delete_crd", "eventually", "install_crd"]

CRD = "apiextensions.k8s.io/v1/CustomResourceDefinition"


@overload
async def eventually(check: Callable[[], Awaitable[T]], timeout: float = 5.0, *,  # noqa: ASYNC109
                     interval: float = 0.02, what: str = "condition") -> T: ...


@overload
async def eventually(check: Callable[[], T], timeout: float = 5.0, *,  # noqa: ASYNC109
                     interval: float = 0.02, what: str = "condition") -> T: ...


async def eventually(check: Callable[[], Awaitable[T] | T], timeout: float = 5.0, *,  # noqa: ASYNC109
                     interval: float = 0.02, what: str = "condition") -> T:
    """Call ``check`` (sync or async) until it passes, and return what it returned.

    ``check`` passes when it returns without raising, unless it returns a falsy value other than
    None: a check that only asserts (returns None, as Gomega's ``Eventually(func(g Gomega) {...})``)
    passes once its assertions hold, and a predicate (``lambda: x == y``) once it returns something
    truthy. An ``AssertionError`` raised by ``check`` counts as "not yet"; any other exception
    propagates at once. A lookup that returns None until its object exists is therefore not a
    check: write ``lambda: store.get("x") is not None``.

    After ``timeout`` seconds an ``AssertionError`` names ``what`` and the last failure: the last
    assertion with its traceback (also chained as the cause), or the last falsy value returned.
    """
    deadline = time.monotonic() + timeout
    last: AssertionError | None = None
    last_value: object = None
    while True:
        try:
            got = check()
            if inspect.isawaitable(got):
                got = await got
            if got is None or got:
                return got
            last, last_value = None, got
        except AssertionError as exc:
            last = exc
        if time.monotonic() > deadline:
            if last is not None:
                trace = "".join(traceback.format_exception(last)).rstrip()
                raise AssertionError(f"{what} not met within {timeout}s; the last failure:\n{trace}") from last
            raise AssertionError(f"{what} not met within {timeout}s (the check last returned {last_value!r})")
        await asyncio.sleep(interval)


CRD_LEDGER_ENV = "KUBELOOP_TEST_CRD_LEDGER"
"""A file `install_crd` appends each CRD it creates to (a JSON line: server, name). kubeloop's pytest
plugin names one when the tests run on a real cluster, and deletes the CRDs listed there once the
whole run (every xdist worker) is done: they are cluster-scoped and shared by the tests that install
the same definition, so no single test may delete them."""


def _remember_created(client: Client, name: str) -> None:
    path = os.environ.get(CRD_LEDGER_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as f:  # one short line per write: appends do not interleave
            f.write(json.dumps({"server": client.config.server, "name": name}) + "\n")


async def install_crd(client: Client, definition: Mapping[str, Any], *, timeout: float = 10.0,  # noqa: ASYNC109
                      keep: bool = False) -> str:
    """Create the CRD ``definition`` (an existing one is kept) and wait until the API serves it.

    Returns the kind as ``group/version/Kind`` (the storage version's). Raises ``TimeoutError`` if
    the kind is not served within ``timeout`` seconds, ``ValueError`` for a definition without
    group, kind or versions.

    Under kubeloop's pytest plugin on a real cluster (``KUBELOOP_TEST_KUBECONFIG``), a CRD this call
    created (not one that existed) is deleted when the test run ends, unless ``keep=True``.
    """
    spec = definition.get("spec") or {}
    group, kind = spec.get("group"), (spec.get("names") or {}).get("kind")
    versions = [v for v in spec.get("versions") or () if v.get("served", True)]
    if not group or not kind or not versions:
        raise ValueError("a CustomResourceDefinition needs spec.group, spec.names.kind and a served version")
    version = next((v for v in versions if v.get("storage")), versions[0])["name"]
    ref = f"{group}/{version}/{kind}"
    try:
        await client.create(dict(definition))
    except AlreadyExists:
        pass
    else:
        if not keep:
            _remember_created(client, str((definition.get("metadata") or {}).get("name") or f"{spec['names'].get('plural')}.{group}"))
    async with asyncio.timeout(timeout):
        while True:
            try:
                await client.resolve(ref)
                return ref
            except UnknownResource:
                await asyncio.sleep(0.02)


async def delete_crd(client: Client, name: str, *, timeout: float = 60.0) -> None:  # noqa: ASYNC109
    """Delete CustomResourceDefinition ``name`` and wait until it is gone (absent already: nothing to do).

    Objects of its kind that still carry finalizers are released first: once the test's operator has
    stopped nobody else removes them, and they would hold the CRD, and their namespaces, in
    deletion for ever. Raises ``TimeoutError`` if it is not gone within ``timeout`` seconds.
    """
    try:
        definition = await client.get(CRD, name)
    except NotFound:
        return
    spec = definition.get("spec") or {}
    versions = spec.get("versions") or ()
    stored = next((v for v in versions if v.get("storage")), versions[0] if versions else None)
    if stored is not None:
        resource = f"{spec['group']}/{stored['name']}/{spec['names']['plural']}"
        with contextlib.suppress(UnknownResource, NotFound):
            for obj in (await client.list(resource, namespace=ALL_NAMESPACES)).items:
                meta = obj.get("metadata") or {}
                if meta.get("finalizers"):
                    with contextlib.suppress(NotFound):
                        await client.patch(resource, meta["name"], {"metadata": {"finalizers": None}},
                                           namespace=meta.get("namespace"), type="merge")
    with contextlib.suppress(NotFound):
        await client.delete(CRD, name)
    async with asyncio.timeout(timeout):
        while True:
            try:
                await client.get(CRD, name)
            except NotFound:
                return
            await asyncio.sleep(0.1)
