"""kubeloop.manager: many controllers in one process (see docs/manager.md).

- `Manager` (manager.py): clusters, one shared cache, controllers, informers with indexes,
  leader election, probes and metrics, graceful shutdown.
- `LeaderElection` / `LeaderElector` (lease.py, leader.py): Lease-based election, client-go timing.
- `ProbeServer` (probes.py): ``/healthz``, ``/readyz``, ``/metrics``.
- `ShutdownSignals` (signals.py): first SIGTERM/SIGINT graceful, the second exits at once.
- `SharedInformer` (informers.py): a manager-owned informer for cross-resource lookups.
"""

from kubeloop.manager.informers import SharedInformer
from kubeloop.manager.leader import LeaderElector
from kubeloop.manager.lease import LeaderElection, LeaseRecord
from kubeloop.manager.manager import Manager, ManagerError, Runnable
from kubeloop.manager.probes import ProbeServer
from kubeloop.manager.signals import ShutdownSignals

__all__ = [
    "LeaderElection",
    "LeaderElector",
    "LeaseRecord",
    "Manager",
    "ManagerError",
    "ProbeServer",
    "Runnable",
    "SharedInformer",
    "ShutdownSignals",
]
