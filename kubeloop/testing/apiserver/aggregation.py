"""kube-controller-manager's ClusterRole aggregation controller (cluster mode).

A ClusterRole with an `aggregationRule` gets the rules of every ClusterRole its selectors match
(by name order, each rule once), as `pkg/controller/clusterroleaggregation` computes them: this is
what gives the bootstrap `admin`, `edit` and `view` roles their rules, and what adds a CRD's
`aggregate-to-edit` role to `edit`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import StatusError
from .kinds.apps import selector_matches
from .storage import Bucket, Commit

if TYPE_CHECKING:
    from .controllers import Controllers

CLUSTER_ROLES = "rbac.authorization.k8s.io/clusterroles"
MANAGER = "kube-controller-manager"


class Aggregation:
    """Keeps aggregated ClusterRoles' rules up to date; `changed` is fed every commit."""

    def __init__(self, controllers: Controllers) -> None:
        self.c = controllers
        self.registry = controllers.registry
        self._queued = False

    def changed(self, bucket: Bucket, ch: Commit) -> None:
        if bucket.name == CLUSTER_ROLES and not self._queued:
            self._queued = True
            self.c._later(0, self._sync)

    def _sync(self) -> bool:
        self._queued = False
        info = self.registry.catalog.lookup("rbac.authorization.k8s.io", "v1", "clusterroles")
        if info is None:
            return True
        roles = {key[1]: st for key, st in self.registry.bucket(info).objects.items()}
        for name, st in sorted(roles.items()):
            rule = st.obj.get("aggregationRule")
            if not isinstance(rule, dict) or st.obj["metadata"].get("deletionTimestamp"):
                continue
            rules: list[Any] = []
            for selector in rule.get("clusterRoleSelectors") or []:
                for other_name, other in sorted(roles.items()):
                    labels = other.obj["metadata"].get("labels") or {}
                    if other_name == name or not isinstance(selector, dict) or not selector_matches(selector, labels):
                        continue
                    for r in other.obj.get("rules") or []:
                        if r not in rules:
                            rules.append(r)
            if rules != (st.obj.get("rules") or []):
                role = self.registry.view(info, st)
                role["rules"] = rules
                try:
                    self.registry.update(info, "", name, role, manager=MANAGER, dry_run=False)
                except StatusError:  # a concurrent write: its commit queues another pass
                    continue
        return True
