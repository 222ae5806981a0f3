"""kubeloop.manager: many controllers in one process (see docs/manager.md).

The modules are private (``_name.py``); every public name is exported here.

- `Manager` (_manager.py): clusters, one shared cache, controllers, informers with indexes,
  leader election, probes and metrics, graceful shutdown; its life as a phase (_phase.py).
- `Runnable`, `Stop` (_runnable.py): what the Manager runs, in groups started in a fixed order;
  its own parts are runnables too: the caches (_caches.py), each controller (_controllers.py),
  leader election or sharding (_coordination.py), the probe server and readiness log (_probes.py).
- `LeaderElection` / `LeaderElector` (_lease.py, _leader.py): Lease-based election, client-go timing.
- `Sharding` / `ShardMember` (_sharding.py, _membership.py, _rendezvous.py): spread keys over
  replicas with membership Leases and rendezvous hashing, fenced (docs/sharding.md).
- `ProbeServer` (_probes.py): ``/healthz``, ``/readyz``, ``/metrics``.
- `ShutdownSignals` (_signals.py): first SIGTERM/SIGINT graceful, the second exits at once.
- `ManagedInformer` (_informers.py): a manager-owned informer for cross-resource lookups.
- `ClustersFromSecrets` (_clusters.py): the manager's clusters kept in sync with kubeconfig Secrets.
- `WebhookOptions` (_webhooks.py): how `Manager.add_webhooks` serves a `kubeloop.webhooks.Webhooks`
  set (port, certificates from a Secret, a cert-manager directory or the dev loop's), and the
  runnables it adds (certificates and server in ``servers``; the dev loop's installation; the
  storage-version migration).
- `load_target`, `setup_manager`, `check_module`, `module_webhooks`, `LoadError` (_target.py): an
  operator module run by its convention (``setup(manager)``, ``controllers``, ``webhooks``), as
  `kubeloop run` and `kubeloop.testing.OperatorRunner` load it.
"""

from typing import TYPE_CHECKING

from kubeloop.manager._clusters import ClustersFromSecrets
from kubeloop.manager._errors import ManagerError
from kubeloop.manager._informers import ManagedInformer
from kubeloop.manager._leader import LeaderElector
from kubeloop.manager._lease import LeaderElection, LeaseRecord, LeaseTimings
from kubeloop.manager._manager import Manager
from kubeloop.manager._membership import ShardMember
from kubeloop.manager._phase import Phase
from kubeloop.manager._probes import ProbeServer
from kubeloop.manager._runnable import Runnable, RunnableFn, Stop
from kubeloop.manager._sharding import Sharding
from kubeloop.manager._signals import ShutdownSignals
from kubeloop.manager._target import (
    LoadError,
    check_module,
    default_lease_name,
    load_target,
    module_webhooks,
    setup_manager,
)
from kubeloop.manager._webhooks import WebhookOptions, webhook_service_name

__all__ = [
    "ClustersFromSecrets",
    "LeaderElection",
    "LeaderElector",
    "LeaseRecord",
    "LeaseTimings",
    "LoadError",
    "ManagedInformer",
    "Manager",
    "ManagerError",
    "Phase",
    "ProbeServer",
    "Runnable",
    "RunnableFn",
    "ShardMember",
    "Sharding",
    "ShutdownSignals",
    "Stop",
    "WebhookOptions",
    "check_module",
    "default_lease_name",
    "load_target",
    "module_webhooks",
    "setup_manager",
    "webhook_service_name",
]

if TYPE_CHECKING:  # the manager's informers conform to `kubeloop.cache.Reader` (checked by mypy)
    from kubeloop.cache import Reader

    def _fronts(i: ManagedInformer) -> Reader:
        return i
