"""Several versions of one resource: hub-and-spoke conversion, the conversion annotation, the CRD."""

from __future__ import annotations

import orjson
import pytest

from kubeloop.resources import CONVERSION_ANNOTATION, ConversionError, SchemaError, Spoke, Versions, crd
from kubeloop.testing import check_lossless
from tests.webhooks.models import GROUP, PARTS, Gadget, Part, PartV1, PartV2, v1_down, v1_up


def part(version: str, spec: dict[str, object], **meta: object) -> dict[str, object]:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "Part",
            "metadata": {"name": "p", "namespace": "ns", "uid": "u-1", **meta}, "spec": spec}


def test_spoke_to_spoke_goes_through_the_hub_and_keeps_metadata() -> None:
    v2 = PARTS.convert(part("v1", {"lengthCm": 4}, labels={"a": "b"}), f"{GROUP}/v2")
    assert v2 == part("v2", {"lengthMm": 40, "finish": ""}, labels={"a": "b"})
    assert PARTS.convert(v2, f"{GROUP}/v1") == part("v1", {"lengthCm": 4}, labels={"a": "b"})


def test_what_a_spoke_cannot_express_is_kept_and_restored() -> None:
    hub = part("v3", {"lengthMm": 47, "finish": "matte", "tags": ["x"]})
    as_v1 = PARTS.convert(hub, f"{GROUP}/v1")
    assert as_v1["spec"] == {"lengthCm": 4}
    saved = orjson.loads(as_v1["metadata"]["annotations"][CONVERSION_ANNOTATION])  # type: ignore[index]
    assert saved == {"v3": {"spec": {"lengthMm": 47, "finish": "matte", "tags": ["x"]}}}
    assert PARTS.convert(as_v1, f"{GROUP}/v3") == hub  # back exactly, annotation gone
    # a v1 client changed the length: the new length wins, what v1 cannot see is kept
    edited = {**as_v1, "spec": {"lengthCm": 9}}
    assert PARTS.convert(edited, f"{GROUP}/v3")["spec"] == {"lengthMm": 90, "finish": "matte", "tags": ["x"]}
    # through another spoke: v2 shows the finish, and the tags come back at the hub
    as_v2 = PARTS.convert(as_v1, f"{GROUP}/v2")
    assert as_v2["spec"] == {"lengthMm": 47, "finish": "matte"}
    assert PARTS.convert(as_v2, f"{GROUP}/v3")["spec"] == {"lengthMm": 47, "finish": "matte", "tags": ["x"]}
    # a hub object a spoke expresses fully needs no annotation
    plain = PARTS.convert(part("v3", {"lengthMm": 50}), f"{GROUP}/v1")
    assert "annotations" not in plain["metadata"]  # type: ignore[operator]


def test_every_version_round_trips() -> None:
    check_lossless(PARTS, max_examples=40)


def test_a_lossy_spoke_fails_the_property() -> None:
    def forgets(p: PartV1) -> Part:
        return v1_up(p).model_copy(update={"spec": v1_up(p).spec.model_copy(update={"length_mm": 0})})

    lossy = Versions(Part, Spoke(PartV1, to_hub=forgets, from_hub=v1_down))
    with pytest.raises(AssertionError, match="PartV1 -> Part -> PartV1 is not lossless"):
        check_lossless(lossy, max_examples=40)


def test_bad_objects_and_failing_functions_are_errors_naming_the_object() -> None:
    with pytest.raises(ConversionError, match=r"Part ns/p .*not a valid PartV1"):
        PARTS.convert(part("v1", {"lengthCm": -1}), f"{GROUP}/v3")
    with pytest.raises(ConversionError, match="has no version 'v9'"):
        PARTS.convert(part("v1", {"lengthCm": 1}), f"{GROUP}/v9")

    def broken(p: PartV1) -> Part:
        raise KeyError("x")

    with pytest.raises(ConversionError, match=r"broken.*KeyError"):
        Versions(Part, Spoke(PartV1, to_hub=broken, from_hub=v1_down)).convert(part("v1", {"lengthCm": 1}),
                                                                             f"{GROUP}/v3")
    with pytest.raises(ConversionError, match=r"not a tests\.kubeloop\.dev/Part"):
        PARTS.convert({"apiVersion": "other.dev/v1", "kind": "Part", "metadata": {}}, f"{GROUP}/v3")


def test_declarations_are_checked() -> None:
    with pytest.raises(SchemaError, match="Gadget"):
        Versions(Part, Spoke(Gadget, to_hub=v1_up, from_hub=v1_down))
    with pytest.raises(SchemaError, match="more than once"):
        Versions(Part, Spoke(PartV1, to_hub=v1_up, from_hub=v1_down), Spoke(PartV1, to_hub=v1_up, from_hub=v1_down))
    with pytest.raises(TypeError, match="Spoke"):
        Versions(Part, PartV2)  # type: ignore[arg-type]


def test_the_crd_converts_through_the_webhook() -> None:
    with pytest.raises(SchemaError, match="client_config"):
        crd(PARTS)
    definition = crd(PARTS, client_config={"url": "https://127.0.0.1:9443/convert", "caBundle": "Q0E="})
    spec = definition["spec"]
    assert spec["conversion"] == {"strategy": "Webhook", "webhook": {
        "conversionReviewVersions": ["v1"], "clientConfig": {"url": "https://127.0.0.1:9443/convert",
                                                            "caBundle": "Q0E="}}}
    assert [(v["name"], v["storage"]) for v in spec["versions"]] == [("v3", True), ("v1", False), ("v2", False)]
    assert definition["metadata"]["name"] == f"parts.{GROUP}"
    with pytest.raises(SchemaError, match="url"):
        crd(PARTS, client_config={"caBundle": "Q0E="})
