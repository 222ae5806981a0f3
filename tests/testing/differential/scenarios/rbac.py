"""RBAC objects: Roles, ClusterRoles (aggregation), RoleBindings, ClusterRoleBindings."""

from __future__ import annotations

from ..harness import Run
from .common import APPLY, JSONPATCH, MERGE, namespace

RBAC = "/apis/rbac.authorization.k8s.io/v1"


async def scenario_rbac_roles(run: Run) -> None:
    ns = await namespace(run, "rbac")
    roles = f"{RBAC}/namespaces/{ns}/roles"
    await run.req("create role", "POST", roles, {"metadata": {"name": "reader"}, "rules": [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]})
    await run.req("create role without rules", "POST", roles, {"metadata": {"name": "empty"}})
    await run.req("create rule without verbs", "POST", roles, {"metadata": {"name": "noverbs"}, "rules": [
        {"apiGroups": [""], "resources": ["pods"]}]})
    await run.req("create rule without apiGroups", "POST", roles, {"metadata": {"name": "nogroups"}, "rules": [
        {"resources": ["pods"], "verbs": ["get"]}]})
    await run.req("create rule with nonResourceURLs in a role", "POST", roles, {"metadata": {"name": "urls"},
                                                                               "rules": [{"nonResourceURLs": ["/healthz"],
                                                                                          "verbs": ["get"]}]})
    await run.req("create colon name", "POST", roles, {"metadata": {"name": "system:custom"}, "rules": []})
    await run.req("create slash name", "POST", roles, {"metadata": {"name": "a/b"}})
    await run.req("add a rule by json patch", "PATCH", f"{roles}/reader",
                  [{"op": "add", "path": "/rules/-", "value": {"apiGroups": ["apps"], "resources": ["deployments"],
                                                               "verbs": ["*"]}}], ctype=JSONPATCH)
    await run.req("apply role", "PATCH", f"{roles}/applied", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "applied"},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"], "resourceNames": ["s1"]}]},
        ctype=APPLY, query={"fieldManager": "ops"})
    croles = f"{RBAC}/clusterroles"
    name = run.name("fd-agg")
    run.on_cleanup(f"{croles}/{name}")
    run.on_cleanup(f"{croles}/{name}-urls")
    await run.req("create aggregated clusterrole", "POST", croles, {"metadata": {"name": name}, "aggregationRule": {
        "clusterRoleSelectors": [{"matchLabels": {"fd.example.com/aggregate": "true"}}]}})
    await run.req("create clusterrole with nonResourceURLs", "POST", croles, {"metadata": {"name": f"{name}-urls"},
                                                                             "rules": [{"nonResourceURLs": ["/logs/*"],
                                                                                        "verbs": ["get"]}]})
    await run.req("create clusterrole nonResourceURL with resources", "POST", croles, {
        "metadata": {"name": f"{name}-bad"}, "rules": [{"nonResourceURLs": ["/x"], "resources": ["pods"],
                                                       "verbs": ["get"]}]})
    await run.req("get aggregated clusterrole", "GET", f"{croles}/{name}")


async def scenario_rbac_bindings(run: Run) -> None:
    ns = await namespace(run, "rbind")
    base = f"{RBAC}/namespaces/{ns}/rolebindings"
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"}
    await run.req("create binding", "POST", base, {"metadata": {"name": "b1"}, "roleRef": ref, "subjects": [
        {"kind": "ServiceAccount", "name": "default", "namespace": ns},
        {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"},
        {"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"}]})
    await run.req("create binding with service account missing namespace", "POST", base, {
        "metadata": {"name": "b2"}, "roleRef": ref, "subjects": [{"kind": "ServiceAccount", "name": "default"}]})
    await run.req("create binding bad subject kind", "POST", base, {"metadata": {"name": "b3"}, "roleRef": ref,
                                                                   "subjects": [{"kind": "Robot", "name": "r"}]})
    await run.req("create binding bad roleRef kind", "POST", base, {"metadata": {"name": "b4"}, "roleRef": {
        "apiGroup": "rbac.authorization.k8s.io", "kind": "Pod", "name": "x"}})
    await run.req("create binding roleRef without apiGroup", "POST", base, {"metadata": {"name": "b5"}, "roleRef": {
        "kind": "Role", "name": "x"}})
    await run.req("create binding user without apiGroup", "POST", base, {"metadata": {"name": "b6"}, "roleRef": ref,
                                                                        "subjects": [{"kind": "User", "name": "bob"}]})
    await run.req("change roleRef (immutable)", "PATCH", f"{base}/b1", {"roleRef": {"name": "writer"}}, ctype=MERGE)
    await run.req("change subjects", "PATCH", f"{base}/b1", {"subjects": [
        {"kind": "User", "name": "carol", "apiGroup": "rbac.authorization.k8s.io"}]}, ctype=MERGE)
    crb = f"{RBAC}/clusterrolebindings"
    name = run.name("fd-crb")
    run.on_cleanup(f"{crb}/{name}")
    await run.req("create clusterrolebinding", "POST", crb, {"metadata": {"name": name}, "roleRef": {
        "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}, "subjects": [
        {"kind": "ServiceAccount", "name": "default", "namespace": ns}]})
    await run.req("create clusterrolebinding to a Role", "POST", crb, {"metadata": {"name": f"{name}-r"}, "roleRef": {
        "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "view"}})
    await run.req("get clusterrolebinding", "GET", f"{crb}/{name}")
