"""The conversion webhook: a ConversionReview answered whole, or failed whole with the reason."""

from __future__ import annotations

import uuid
from typing import Any

import orjson

from kubeloop.webhooks import Converter

from .models import GROUP, PARTS


def request(objects: list[Any], desired: str) -> dict[str, Any]:
    return {"uid": str(uuid.uuid4()), "desiredAPIVersion": desired, "objects": objects}


def part(version: str, spec: dict[str, Any], name: str = "p") -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "Part", "metadata": {"name": name, "uid": name}, "spec": spec}


async def test_a_review_converts_every_object_it_carries() -> None:
    converter = Converter([PARTS])
    req = request([part("v1", {"lengthCm": i}, f"p{i}") for i in range(200)], f"{GROUP}/v3")
    answer = orjson.loads(await converter.review(req))
    assert answer["apiVersion"] == "apiextensions.k8s.io/v1" and answer["kind"] == "ConversionReview"
    response = answer["response"]
    assert response["uid"] == req["uid"] and response["result"] == {"status": "Success"}
    assert [o["spec"]["lengthMm"] for o in response["convertedObjects"]] == [10 * i for i in range(200)]
    assert {o["apiVersion"] for o in response["convertedObjects"]} == {f"{GROUP}/v3"}


async def test_one_bad_object_fails_the_review_with_its_name() -> None:
    converter = Converter([PARTS])
    req = request([part("v1", {"lengthCm": 1}), part("v1", {"lengthCm": -5}, "bad")], f"{GROUP}/v2")
    response = orjson.loads(await converter.review(req))["response"]
    assert response["result"]["status"] == "Failure"
    assert "Part bad" in response["result"]["message"] and response["convertedObjects"] == []
    other = orjson.loads(await converter.review(request([{"apiVersion": "x.dev/v1", "kind": "Y", "metadata": {}}],
                                                        f"{GROUP}/v2")))["response"]
    assert "not x.dev/v1/Y" in other["result"]["message"]
