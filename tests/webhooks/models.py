"""Typed resources the webhook tests use: a one-version Gadget, and a Part served in three versions
(hub v3; v1 and v2 spokes) with conversions, for spoke-to-spoke conversion through the hub."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kubeloop.resources import CustomResource, Model, Spoke, Versions

GROUP = "tests.kubeloop.dev"


class GadgetSpec(Model):
    color: Literal["red", "blue", "black"]
    size: int = Field(1, ge=1, le=5)


class Gadget(CustomResource, group=GROUP, version="v1"):
    spec: GadgetSpec


class PartSpecV1(Model):
    length_cm: int = Field(ge=0)


class PartV1(CustomResource, group=GROUP, version="v1", kind="Part"):
    spec: PartSpecV1


class PartSpecV2(Model):
    length_mm: int = Field(ge=0)
    finish: str = ""


class PartV2(CustomResource, group=GROUP, version="v2", kind="Part"):
    spec: PartSpecV2


class PartSpec(Model):
    length_mm: int = Field(ge=0)
    finish: str = ""
    tags: list[str] = []


class Part(CustomResource, group=GROUP, version="v3", storage=True):
    spec: PartSpec


def v1_up(p: PartV1) -> Part:
    return Part(spec=PartSpec(length_mm=p.spec.length_cm * 10))


def v1_down(p: Part) -> PartV1:
    return PartV1(spec=PartSpecV1(length_cm=p.spec.length_mm // 10))


def v2_up(p: PartV2) -> Part:
    return Part(spec=PartSpec(length_mm=p.spec.length_mm, finish=p.spec.finish))


def v2_down(p: Part) -> PartV2:
    return PartV2(spec=PartSpecV2(length_mm=p.spec.length_mm, finish=p.spec.finish))


PARTS = Versions(Part, Spoke(PartV1, to_hub=v1_up, from_hub=v1_down), Spoke(PartV2, to_hub=v2_up, from_hub=v2_down))
