"""kubeloop.testing: the Kubernetes API server emulator and test helpers.

`APIServer` runs the emulator in-process (async context manager); the pytest plugin in
`pytest_plugin.py` gives each test a fresh one (or a real cluster, see `TestCluster`).
"""

from .apiserver.server import APIServer
from .cluster import TestCluster

__all__ = ["APIServer", "TestCluster"]
