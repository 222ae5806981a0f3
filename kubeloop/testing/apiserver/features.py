"""The Kubernetes version the emulator is, and the later features a user may switch on.

By default the emulator behaves as the recorded version (1.24) and nothing newer: a test that
passes on it takes only paths a 1.24 cluster offers. Features of later versions are explicit
options, named by their upstream feature gates (`kubeloop apiserver --feature-gates
WatchList=true`, `APIServer(feature_gates={"WatchList": True})`, `KUBELOOP_TEST_FEATURE_GATES` for
the pytest fixtures):

- `WatchList` (alpha in 1.27): streaming lists, a WATCH with `sendInitialEvents=true`. Off, as in
  1.24, the parameter is unknown and ignored, and `resourceVersionMatch` on a watch is invalid.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: feature gate -> (default, the version that has it): every gate the emulator knows
KNOWN: dict[str, tuple[bool, str]] = {
    "WatchList": (False, "1.27 (alpha)"),
}


class FeatureGateError(ValueError):
    """A feature gate the emulator does not know, or a value that is not a boolean."""


@dataclass(frozen=True)
class FeatureGates:
    """Which gated features are on (every gate off unless set)."""

    enabled_gates: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, gates: Mapping[str, bool] | str | FeatureGates | None) -> FeatureGates:
        """From a mapping (`{"WatchList": True}`), kube's flag syntax (`"WatchList=true,X=false"`),
        gates, or None (the defaults). Unknown names and non-boolean values raise `FeatureGateError`."""
        if isinstance(gates, FeatureGates):
            return gates
        if gates is None:
            gates = {}
        if isinstance(gates, str):
            gates = parse(gates)
        on = {name for name, (default, _since) in KNOWN.items() if default}
        for name, value in gates.items():
            if name not in KNOWN:
                raise FeatureGateError(f"unrecognized feature gate: {name} (known: {', '.join(sorted(KNOWN))})")
            if not isinstance(value, bool):
                raise FeatureGateError(f"invalid value of {name}={value!r}: must be true or false")
            (on.add if value else on.discard)(name)
        return cls(frozenset(on))

    def enabled(self, name: str) -> bool:
        if name not in KNOWN:
            raise FeatureGateError(f"unrecognized feature gate: {name}")
        return name in self.enabled_gates

    def __str__(self) -> str:
        return ",".join(f"{name}={'true' if name in self.enabled_gates else 'false'}" for name in sorted(KNOWN))


def parse(text: str) -> dict[str, bool]:
    """`"WatchList=true,Other=false"` (kube-apiserver's `--feature-gates` syntax) as a mapping."""
    out: dict[str, bool] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        name, value = name.strip(), value.strip().lower()
        if not sep or value not in ("true", "false"):
            raise FeatureGateError(f"invalid feature gate {part!r}: expected NAME=true or NAME=false")
        out[name] = value == "true"
    return out
