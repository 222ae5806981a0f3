"""Pod specs validated and admitted as kube-apiserver 1.24 does: the replay of
`data/pod-validation-1.24.json`, recorded from the real control plane (a Pod per case, each a
mistake an operator's Pod template can carry, or a value 1.24 accepts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.testing.conftest import Http

RECORDED: dict[str, Any] = json.loads((Path(__file__).parent / "data" / "pod-validation-1.24.json").read_text())
CASES = RECORDED["cases"]


@pytest.mark.parametrize("case", sorted(CASES))
async def test_a_pod_spec_gets_the_answer_1_24_gave(cluster_http: Http, case: str) -> None:
    expected = CASES[case]
    ns = "pod-validation"
    await cluster_http.post("/api/v1/namespaces", {"metadata": {"name": ns}})
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": expected["spec"]}
    code, answer = await cluster_http.post(f"/api/v1/namespaces/{ns}/pods", body, dryRun="All")
    assert code == expected["status"], answer
    if code != 201:
        assert answer["message"] == expected["message"].replace("{namespace}", ns)
