"""The differential scenarios (`differential/`), recorded from a real kube-apiserver 1.24, replayed
against the emulator: every step's projection must be what the real server answered."""

from __future__ import annotations

import os

import aiohttp
import pytest

from kubeloop.testing import APIServer

from .differential.harness import Run, compare_steps
from .differential.record import load
from .differential.scenarios import SCENARIOS

RECORDED = load()["scenarios"]

pytestmark = pytest.mark.skipif(bool(os.environ.get("KUBELOOP_TEST_KUBECONFIG")),
                                reason="replays recordings against the emulator")


def test_every_scenario_is_recorded() -> None:
    assert set(RECORDED) == set(SCENARIOS), "record the new scenarios: python -m tests.testing.differential.record"


@pytest.mark.parametrize("name", sorted(RECORDED))
async def test_emulator_answers_as_the_real_server(name: str) -> None:
    async with APIServer(bare=True, crd_cleanup_delay=0.05) as api, aiohttp.ClientSession() as session:
        run = Run(api.url, session)
        try:
            await SCENARIOS[name](run)
        finally:
            await run.run_cleanup()
    problems = compare_steps(RECORDED[name], run.steps)
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:40])
