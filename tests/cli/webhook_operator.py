"""A small webhook operator for the RBAC test of `kubeloop manifests`: a Knob served as v1 (`level`)
and v2 (`value`, the storage version) with a conversion, and a validating webhook for Knobs labelled
`checked=yes` only (so the test's own writes need no webhook server). It has no controller: what
runs is the certificate manager, the webhook server and the storage-version migration."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kubeloop.resources import CustomResource, Model, Spoke, Versions
from kubeloop.webhooks import AdmissionRequest, Verdict, Webhooks, allow, deny

GROUP = "knobs.tests.kubeloop.dev"


class KnobSpecV1(Model):
    level: Literal["low", "high"]


class KnobV1(CustomResource, group=GROUP, version="v1", kind="Knob"):
    spec: KnobSpecV1


class KnobSpec(Model):
    value: int = Field(ge=0, le=10)


class Knob(CustomResource, group=GROUP, version="v2", storage=True):
    spec: KnobSpec


def up(knob: KnobV1) -> Knob:
    return Knob(spec=KnobSpec(value=9 if knob.spec.level == "high" else 1))


def down(knob: Knob) -> KnobV1:
    return KnobV1(spec=KnobSpecV1(level="high" if knob.spec.value >= 5 else "low"))


webhooks = Webhooks(f"knobs.{GROUP}")
webhooks.conversion(Versions(Knob, Spoke(KnobV1, to_hub=up, from_hub=down)))


@webhooks.validating(Knob, labels={"checked": "yes"})
def not_eleven(req: AdmissionRequest[Knob]) -> Verdict:
    return deny("this one goes to eleven") if req.name == "eleven" else allow()
