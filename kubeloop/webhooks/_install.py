"""Installing a `Webhooks` set into a cluster for a run, and putting the cluster back afterwards:
what the dev loop (`kubeloop run FILE --webhook-host 127.0.0.1`) does around the operator's run.

    async with installed(client, webhooks, ClientConfig(url=server.url, ca_bundle=certs.ca_bundle)):
        ...                     # the API server calls the local server

On entry: each converted resource's CRD is created, or replaced by the one the code declares
(versions and schemas as the code has them now), with its conversion webhook at the client config,
and waited for until every version is served; then the Validating/MutatingWebhookConfigurations are
created or replaced. On exit, in the reverse order, the cluster is put back as it was found:

- a configuration this run created is deleted; one that existed is replaced by what it was;
- a CRD keeps the versions and schemas the run installed, and the objects written meanwhile; its
  `spec.conversion` goes back to what it was (`None` for a CRD this run created). Deleting the CRD
  would delete the developer's objects, and leaving a conversion webhook nobody serves would make
  every read through another version fail (and the CRD itself hard to delete).

Removal is best effort: each object is tried, a failure is logged and the next one tried. What
`install` writes carries the annotation `kubeloop.dev/dev-loop`; a run killed before it could put
the cluster back (a second Ctrl-C) leaves it on, and the next run, finding it, puts those objects
back to nothing (configurations deleted, conversion `None`), not to the dead run's.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from kubeloop.client import AlreadyExists, ApiError, Client, Conflict, NotFound, UnknownResource

from ._admission import ClientConfig
from ._webhooks import Webhooks

__all__ = ["Installation", "install", "installed"]

log = logging.getLogger("kubeloop.webhooks")

CRD = "apiextensions.k8s.io/v1/CustomResourceDefinition"
ADMISSION = "admissionregistration.k8s.io/v1"
#: on what `install` wrote: a dev loop's, to put back to nothing if that run could not (it was killed)
DEV_LOOP_ANNOTATION = "kubeloop.dev/dev-loop"


@dataclass
class Installation:
    """What `install` changed: per object (kind, name), what was there before (None: nothing)."""

    client: Client
    #: configurations: (kind, name) -> the object before (None: created by this installation)
    configurations: dict[tuple[str, str], dict[str, Any] | None] = field(default_factory=dict)
    #: CRDs: name -> its `spec.conversion` before (None: created by this installation)
    crds: dict[str, dict[str, Any] | None] = field(default_factory=dict)

    async def remove(self) -> None:
        """Put back what `install` changed (see the module docstring); best effort, each object tried."""
        for (kind, name), before in reversed(list(self.configurations.items())):
            try:
                if before is None:
                    await self.client.delete(kind, name)
                else:
                    await _put_back(self.client, kind, name, _as(before, False))
                log.info("webhook configuration %s %s %s", kind.rpartition("/")[2], name,
                         "deleted" if before is None else "restored")
            except NotFound:
                pass
            except (ApiError, OSError) as e:
                log.error("could not remove webhook configuration %s: %s", name, e)
        for name, conversion in reversed(list(self.crds.items())):
            try:
                await _put_back(self.client, CRD, name, _with_conversion(conversion or {"strategy": "None"}))
                log.info("CRD %s: conversion put back to %s", name, (conversion or {}).get("strategy", "None"))
            except NotFound:
                pass
            except (ApiError, OSError) as e:
                log.error("could not put back the conversion of CRD %s: %s", name, e)
        self.configurations.clear()
        self.crds.clear()


async def _put_back(client: Client, kind: str, name: str,
                    change: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """Replace `kind` `name` with `change(current)` under the current resourceVersion (a conflict:
    read again and retry); returns the object it replaced."""
    for _ in range(5):
        current = await client.get(kind, name)
        new = change(current)
        new.setdefault("metadata", {})["resourceVersion"] = current["metadata"]["resourceVersion"]
        try:
            await client.replace(new)
            return current
        except Conflict:
            continue
    raise Conflict({"code": 409, "reason": "Conflict", "message": f"{name} kept changing under this writer (5 attempts)"})


def _marked(metadata: dict[str, Any], mark: bool) -> dict[str, Any]:
    """`metadata` (a copy) with the dev loop's annotation set or removed."""
    out = copy.deepcopy(metadata)
    annotations = dict(out.get("annotations") or {})
    if mark:
        annotations[DEV_LOOP_ANNOTATION] = "true"
    else:
        annotations.pop(DEV_LOOP_ANNOTATION, None)
    out["annotations"] = annotations
    return out


def _left_by_a_dev_loop(obj: dict[str, Any]) -> bool:
    return DEV_LOOP_ANNOTATION in ((obj.get("metadata") or {}).get("annotations") or {})


def _with_conversion(conversion: dict[str, Any]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A CRD with `conversion` put back, no longer marked."""
    def change(current: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(current)
        out["spec"]["conversion"] = copy.deepcopy(conversion)
        out["metadata"] = _marked(current["metadata"], False)
        return out
    return change


def _with_spec(spec: dict[str, Any]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A CRD with the declared `spec`, marked."""
    return lambda current: {**copy.deepcopy(current), "spec": copy.deepcopy(spec),
                            "metadata": _marked(current["metadata"], True)}


def _as(configuration: dict[str, Any], mark: bool) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A configuration as `configuration` says, with the metadata of the one in the cluster."""
    return lambda current: {**copy.deepcopy(configuration), "metadata": _marked(current["metadata"], mark)}


async def install(client: Client, webhooks: Webhooks, client_config: ClientConfig, *,
                  timeout: float = 60.0) -> Installation:  # noqa: ASYNC109
    """Create or replace the CRDs and webhook configurations of `webhooks` pointing at
    `client_config`; returns what to `remove()` afterwards (on a failure halfway, what was done so
    far is put back before the error is raised). Waits up to `timeout` seconds for the CRDs to be
    served (`TimeoutError`).

    What it writes carries the annotation `kubeloop.dev/dev-loop`: an object found with it was left
    by a dev loop that could not clean up (killed), and counts as absent (put back to nothing)."""
    done = Installation(client)
    try:
        for definition in webhooks.crds(client_config):
            name = definition["metadata"]["name"]
            definition["metadata"] = _marked(definition["metadata"], True)
            try:
                await client.create(definition)
                done.crds[name] = None
            except AlreadyExists:
                before = await _put_back(client, CRD, name, _with_spec(definition["spec"]))
                done.crds[name] = None if _left_by_a_dev_loop(before) else \
                    copy.deepcopy((before.get("spec") or {}).get("conversion")) or {"strategy": "None"}
            try:
                async with asyncio.timeout(timeout):
                    await _served(client, definition)
            except TimeoutError:
                raise TimeoutError(f"CRD {name} was not served within {timeout:g}s") from None
        for configuration in webhooks.configurations(client_config):
            kind, name = f"{ADMISSION}/{configuration['kind']}", configuration["metadata"]["name"]
            configuration["metadata"] = _marked(configuration["metadata"], True)
            try:
                await client.create(configuration)
                done.configurations[(kind, name)] = None
            except AlreadyExists:
                before = await _put_back(client, kind, name, _as(configuration, True))
                done.configurations[(kind, name)] = None if _left_by_a_dev_loop(before) else before
    except BaseException:
        await done.remove()
        raise
    log.info("installed the webhook configurations and CRD conversion at %s (removed again on exit)",
             client_config.url or f"service {client_config.service_namespace}/{client_config.service_name}")
    return done


async def _served(client: Client, definition: dict[str, Any]) -> None:
    """Until every served version of the CRD is in discovery."""
    spec = definition["spec"]
    for v in spec.get("versions") or ():
        if v.get("served", True):
            ref = f"{spec['group']}/{v['name']}/{spec['names']['kind']}"
            while True:
                try:
                    await client.resolve(ref)
                    break
                except UnknownResource:
                    await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def installed(client: Client, webhooks: Webhooks, client_config: ClientConfig, *,
                    timeout: float = 60.0) -> AsyncIterator[Installation]:  # noqa: ASYNC109
    """`install` for the block, `remove` after it (also when it fails or is cancelled)."""
    done = await install(client, webhooks, client_config, timeout=timeout)
    try:
        yield done
    finally:
        await done.remove()
