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

Options: `gc` (garbage collector on/off), `history_size`, `bookmark_interval`,
`namespace_delete_delay`, `future_rv_wait`. The pytest plugin (`pytest_plugin.py`) gives each test
a fresh server as the `apiserver` fixture (a `TestCluster`), or the real cluster named by
`KUBELOOP_TEST_KUBECONFIG`, with a `client` on it and a fresh `namespace`; `kubeloop apiserver` runs the same server from the command line, and
`APIServerProcess` runs that command as a child process (benchmarks) with the same fault API.
`eventually()` waits for a condition and `install_crd()` installs a CRD and waits until it is served,
for tests that run on the emulator and on a real cluster alike.
"""

from ._kit import eventually, install_crd
from .apiserver.server import APIServer
from .cluster import TestCluster
from .process import APIServerProcess

__all__ = ["APIServer", "APIServerProcess", "TestCluster", "eventually", "install_crd"]
