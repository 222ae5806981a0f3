"""The differential scenarios, by area; `SCENARIOS` maps each name to its function."""

from __future__ import annotations

from ..harness import Scenario
from . import (
    apply,
    configs,
    crds,
    networking,
    ownerrefs,
    patches,
    rbac,
    records,
    services,
    subresources,
    workloads,
)

SCENARIOS: dict[str, Scenario] = {}
for _module in (workloads, services, networking, rbac, records, apply, patches, subresources, crds, ownerrefs,
                configs):
    for _name, _fn in vars(_module).items():
        if _name.startswith("scenario_"):
            SCENARIOS[_name.removeprefix("scenario_")] = _fn
