"""`TestCluster`: what a test gets from the `apiserver` fixture, emulator or real cluster alike.

Tests written against this interface run unchanged on the emulator and, when
`KUBELOOP_TEST_KUBECONFIG` names a kubeconfig, on a real cluster. Only the emulator offers fault
injection and stats: `faults` is None on a real cluster (use `require_faults()` to skip).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Unpack

from kubeloop.client import Client, TransportOptions
from kubeloop.config import load_kubeconfig

if TYPE_CHECKING:
    from .apiserver.faults import Faults
    from .apiserver.server import APIServer


@dataclass
class TestCluster:
    """A cluster for one test: where it is, how to authenticate, and (emulator only) its fault switches."""

    __test__ = False  # not a pytest test class

    url: str
    kubeconfig: str
    token: str | None = None
    faults: Faults | None = None
    server: APIServer | None = field(default=None, repr=False)

    @property
    def is_emulator(self) -> bool:
        return self.server is not None

    def client(self, **options: Unpack[TransportOptions]) -> Client:
        """A new `kubeloop.Client` for this cluster (the caller closes it: `async with cluster.client():`)."""
        return Client(load_kubeconfig(self.kubeconfig), **options)

    def stats(self) -> dict[str, Any]:
        """Open watches and request counts (emulator only)."""
        if self.server is None:
            raise RuntimeError("stats are only available on the kubeloop emulator")
        return self.server.stats()

    def require_faults(self) -> Faults:
        """The fault switches, or skip the calling test on a real cluster."""
        if self.faults is None:
            import pytest

            pytest.skip("fault injection needs the kubeloop emulator (KUBELOOP_TEST_KUBECONFIG is set)")
        return self.faults

    def require_controller_manager(self) -> None:
        """Skip the calling test on a bare emulator (`KUBELOOP_TEST_EMULATOR=bare`), which, like envtest,
        has no garbage collector, namespace controller or workload controllers (a real cluster does)."""
        if self.server is not None and self.server.bare:
            import pytest

            pytest.skip("needs kube-controller-manager's behaviour (the emulator runs bare)")

    @classmethod
    def from_server(cls, server: APIServer) -> TestCluster:
        return cls(url=server.url, kubeconfig=server.kubeconfig, token=server.token, faults=server.faults,
                   server=server)

    @classmethod
    def from_kubeconfig(cls, path: str) -> TestCluster:
        """A real cluster named by a kubeconfig (its current context's server and token, if any)."""
        import yaml

        with open(path) as f:
            cfg = yaml.safe_load(f) or {}
        ctx_name = cfg.get("current-context")
        ctx: dict[str, Any] = next((c.get("context", {}) for c in cfg.get("contexts") or [] if c.get("name") == ctx_name), {})
        cluster: dict[str, Any] = next((c.get("cluster", {}) for c in cfg.get("clusters") or []
                        if c.get("name") == ctx.get("cluster")), {})
        user: dict[str, Any] = next((u.get("user", {}) for u in cfg.get("users") or [] if u.get("name") == ctx.get("user")), {})
        return cls(url=str(cluster.get("server", "")), kubeconfig=path, token=user.get("token"))
