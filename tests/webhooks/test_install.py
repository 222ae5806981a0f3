"""`kubeloop.webhooks.install`: the dev loop's installation puts the cluster back as it found it: what
it created goes, what it replaced comes back, a CRD keeps its objects and gets its conversion back;
what a killed run left (marked) counts as absent. Nothing is called: the webhooks point at closed
ports, and nothing is written through them."""

from __future__ import annotations

import contextlib
from typing import Any

from kubeloop import Client
from kubeloop.client import NotFound
from kubeloop.testing import delete_crd
from kubeloop.webhooks import (
    AdmissionRequest,
    ClientConfig,
    EphemeralCertificates,
    Verdict,
    Webhooks,
    allow,
    install,
)

from .models import PARTS, Part

CRD = "apiextensions.k8s.io/v1/CustomResourceDefinition"
VALIDATING = "admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration"
MUTATING = "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration"
MARK = "kubeloop.dev/dev-loop"

hooks = Webhooks("parts.tests.kubeloop.dev")
hooks.conversion(PARTS)


@hooks.validating(Part)
def look(req: AdmissionRequest[Part]) -> Verdict:
    return allow()


@hooks.mutating(Part)
def keep(req: AdmissionRequest[Part]) -> Part | None:
    return None


def url_of(obj: dict[str, Any]) -> str:
    if obj["kind"] == "CustomResourceDefinition":
        return str(obj["spec"]["conversion"]["webhook"]["clientConfig"]["url"])
    return str(obj["webhooks"][0]["clientConfig"]["url"])


def marked(obj: dict[str, Any]) -> bool:
    return MARK in (obj["metadata"].get("annotations") or {})


async def test_install_then_remove_puts_the_cluster_back(client: Client) -> None:
    ca = EphemeralCertificates(["127.0.0.1"]).ca_bundle
    crd_name = hooks.crd_names[0]
    await delete_crd(client, crd_name)
    theirs = hooks.validating_configuration(ClientConfig(url="https://127.0.0.1:1"))
    assert theirs is not None
    await client.create(theirs)  # someone's own, before the dev loop
    try:
        done = await install(client, hooks, ClientConfig(url="https://127.0.0.1:2", ca_bundle=ca))
        crd, validating, mutating = (await client.get(CRD, crd_name), await client.get(VALIDATING, hooks.name),
                                     await client.get(MUTATING, hooks.name))
        assert [url_of(o) for o in (crd, validating, mutating)] == [
            "https://127.0.0.1:2/convert", f"https://127.0.0.1:2/validate/{hooks.admission[0].name}",
            f"https://127.0.0.1:2/mutate/{hooks.admission[1].name}"]
        assert all(marked(o) for o in (crd, validating, mutating))

        await done.remove()
        crd, validating = await client.get(CRD, crd_name), await client.get(VALIDATING, hooks.name)
        assert crd["spec"]["conversion"] == {"strategy": "None"} and not marked(crd)  # created by it: no conversion
        assert url_of(validating) == "https://127.0.0.1:1/validate/" + hooks.admission[0].name and not marked(
            validating)  # replaced by it: restored
        with contextlib.suppress(NotFound):
            await client.get(MUTATING, hooks.name)
            raise AssertionError("the MutatingWebhookConfiguration it created is still there")

        # a run killed before it could clean up leaves its marks; the next run puts those back to nothing
        await install(client, hooks, ClientConfig(url="https://127.0.0.1:3", ca_bundle=ca))
        again = await install(client, hooks, ClientConfig(url="https://127.0.0.1:4", ca_bundle=ca))
        assert url_of(await client.get(VALIDATING, hooks.name)).startswith("https://127.0.0.1:4/")
        await again.remove()
        for kind in (VALIDATING, MUTATING):
            with contextlib.suppress(NotFound):
                await client.get(kind, hooks.name)
                raise AssertionError(f"{kind} left by the killed run is still there")
        assert (await client.get(CRD, crd_name))["spec"]["conversion"] == {"strategy": "None"}
    finally:
        for kind in (VALIDATING, MUTATING):
            with contextlib.suppress(NotFound):
                await client.delete(kind, hooks.name)
        await delete_crd(client, crd_name)
