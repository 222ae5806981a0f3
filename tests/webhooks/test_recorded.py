"""The webhook scenarios (`scenarios.py`) against the recording of the real kube-apiserver 1.24.

Runs on the emulator (and, with KUBELOOP_TEST_KUBECONFIG, on that cluster: the same comparison
then checks the recording is still what the real server does). Everything must match exactly, with
two kinds of exception written down here:

- how many ConversionReviews the requests of the `conversion` and `match policy` scenarios cost:
  per step, every review the emulator sends must be one the real server sent (same direction), a
  step whose request needed a conversion must send one, and a LIST sends one per object needing
  it, exactly. (The `conversion from the watch cache` scenario counts every review exactly: the
  background conversions of the watch caches, and which reads they serve.)
- `KNOWN`: differences in the emulator outside the webhooks' code, each with its reason.
"""

from __future__ import annotations

import json
from typing import Any

from kubeloop.testing import TestCluster

from .scenarios import RECORDING, run

#: path in the transcript -> why the emulator differs there (remove an entry once it is fixed)
KNOWN = {
    "/conversion/review/request/objects[0]/metadata/managedFields[0]/fieldsV1/f:spec":
        "managedFields of a custom resource: kube-apiserver writes `.` under f:spec (structured-merge-diff "
        "treats a CR's spec as a map), the emulator's fieldpath.py treats spec as a struct",
    "/match policy and stored versions/create v1, equivalent/admission[0]/object/metadata/managedFields[0]/"
    "fieldsV1/f:spec": "the same managedFields difference",
}
#: steps whose request itself needs the conversion webhook (a non-storage version is read or written)
REQUEST_PATH = {"create v1", "get v1", "list v1", "patch v1", "delete v1", "watch v1", "get v1, failing",
                "list v1, failing", "create v1, failing", "create v1, equivalent",
                "no-op update of an object stored as v1"}
#: steps whose reviews are counted exactly (a LIST converts each object once, and writes nothing)
EXACT_COUNT = {"list v1", "list v2", "get v1", "get v2"}


def _shape(review: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    return review["desired"], tuple(review["objects"])


def compare(real: Any, emulated: Any, path: str = "") -> list[str]:
    """Where `emulated` differs from `real` (the conversion-review rules above applied)."""
    if path in KNOWN:
        return []
    name = path.rsplit("/", 2)[-2] if path.endswith("/reviews") else ""
    if path.endswith("/reviews") and (path.startswith("/conversion/") or path.startswith("/match policy")):
        problems = []
        extra = {_shape(r) for r in emulated} - {_shape(r) for r in real}
        if extra:
            problems.append(f"{path}: the emulator sent reviews the real server did not: {sorted(extra)}")
        if name in REQUEST_PATH and not emulated:
            problems.append(f"{path}: the request needs the conversion webhook, the emulator did not call it")
        if name in EXACT_COUNT and len(emulated) != len(real):
            problems.append(f"{path}: {len(emulated)} reviews, the real server sent {len(real)}")
        return problems
    if isinstance(real, dict) and isinstance(emulated, dict):
        out: list[str] = []
        for key in sorted(set(real) | set(emulated)):
            sub = f"{path}/{key}"
            if sub in KNOWN:
                continue
            if key not in real or key not in emulated:
                out.append(f"{sub}: only {'the recording' if key in real else 'the emulator'} has it: "
                           f"{json.dumps(real.get(key, emulated.get(key)))[:200]}")
            else:
                out += compare(real[key], emulated[key], sub)
        return out
    if isinstance(real, list) and isinstance(emulated, list) and len(real) == len(emulated):
        return [p for i, (a, b) in enumerate(zip(real, emulated, strict=True)) for p in compare(a, b, f"{path}[{i}]")]
    if real != emulated:
        return [f"{path}: recorded {json.dumps(real)[:300]}, got {json.dumps(emulated)[:300]}"]
    return []


async def test_webhooks_behave_as_the_recorded_real_server(apiserver: TestCluster) -> None:
    recorded = json.loads(RECORDING.read_text())
    # the watch caches convert each write in the background: counted once done (loopback: sooner)
    transcript = await run(apiserver.kubeconfig, settle=0.1 if apiserver.is_emulator else 0.5)
    assert set(transcript) == set(recorded)
    problems = compare(recorded, transcript)
    assert not problems, "\n".join(problems)


def test_the_comparison_catches_a_difference() -> None:
    recorded = json.loads(RECORDING.read_text())
    changed = json.loads(RECORDING.read_text())
    changed["denials"]["deny-code"]["status"] = 400
    changed["conversion"]["list v1"]["reviews"] = changed["conversion"]["list v1"]["reviews"][:1]
    problems = compare(recorded, changed)
    assert any("deny-code/status" in p for p in problems)
    assert any("list v1/reviews: 1 reviews" in p for p in problems)
