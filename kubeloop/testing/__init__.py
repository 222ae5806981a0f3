"""kubeloop.testing: the Kubernetes API server emulator and test helpers.

    from kubeloop.testing import APIServer

    async with APIServer(token="t", tls=True) as api:   # a real HTTP(S) server on 127.0.0.1
        api.url, api.token, api.kubeconfig              # kubeconfig: a written file (CA embedded with TLS)
        api.faults.close_watches()                      # drop every open watch
        api.faults.expire_next_watch("configmaps")      # the next watch gets 410 Expired
        api.faults.compact()                            # history gone: old RVs get 410
        api.faults.delay(0.2)                           # slow responses
        api.faults.fail_next(3, 429, retry_after=1)     # the next 3 requests fail
        api.stats()                                     # open watches and requests per resource

By default the server is a cluster: it also runs what kube-controller-manager does (namespace
bootstrap and deletion, garbage collection, Deployments, ReplicaSets, Jobs; no scheduler, no
kubelet, so Pods stay Pending); `APIServer(bare=True)` (`kubeloop apiserver --bare`) serves the API
server alone, as envtest does. `pip install 'kubeloop[testing]'` installs what it needs.

Options: `bare`, `gc` (garbage collector on/off), `history_size`, `bookmark_interval`,
`namespace_delete_delay`, `future_rv_wait`. The pytest plugin (`pytest_plugin.py`) gives each test
a fresh server as the `apiserver` fixture (a `TestCluster`), or the real cluster named by
`KUBELOOP_TEST_KUBECONFIG`, with a `client` on it and a fresh `namespace`; `kubeloop apiserver` runs the same server from the command line, and
`APIServerProcess` runs that command as a child process (benchmarks) with the same fault API.
`eventually()` waits for a condition and `install_crd()` installs a CRD and waits until it is served,
for tests that run on the emulator and on a real cluster alike. `VirtualClock` is time a test moves
by hand (`Manager(clock=...)`: a week of an hourly schedule in seconds, docs/testing.md), and
`OperatorRunner` runs an operator module as `kubeloop run` does, inside the test.
`check_lossless(versions)` is a hypothesis property test that every version of a multi-version
resource converts to every other and back unchanged (`resource_objects(model)` generates objects
from a version's schema).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._clock import VirtualClock
    from ._cluster import TestCluster
    from ._conversion import check_lossless, resource_objects
    from ._kit import delete_crd, eventually, install_crd
    from ._process import APIServerProcess
    from ._runner import OperatorRunner
    from .apiserver.server import APIServer

__all__ = ["INSTALL_HINT", "APIServer", "APIServerProcess", "OperatorRunner", "TestCluster", "VirtualClock",
           "check_lossless", "delete_crd", "eventually", "install_crd", "missing_dependencies", "resource_objects"]

#: what to install for the emulator and the fixtures (they are an extra, not a runtime dependency)
INSTALL_HINT = "pip install 'kubeloop[testing]'"
#: the `testing` extra's modules the emulator itself needs (pytest ones only matter to the fixtures)
_EMULATOR_NEEDS = ("cryptography",)


def missing_dependencies() -> list[str]:
    """The emulator's dependencies that are not installed (a plain `pip install kubeloop` lacks them)."""
    import importlib.util

    return [name for name in _EMULATOR_NEEDS if importlib.util.find_spec(name) is None]

# imported on first use: pytest loads the plugin (a submodule) in every run, and an unrelated run
# should not pay for importing the emulator
_LAZY = {"APIServer": ".apiserver.server", "TestCluster": "._cluster", "APIServerProcess": "._process",
         "eventually": "._kit", "install_crd": "._kit", "delete_crd": "._kit", "VirtualClock": "._clock",
         "OperatorRunner": "._runner", "check_lossless": "._conversion", "resource_objects": "._conversion"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
