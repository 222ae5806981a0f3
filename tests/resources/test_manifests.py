"""RBAC rules derived from controller specs (pure): what each declaration needs, scopes, merging,
kind resolution, and the ``kubeloop manifests`` command on modules written for the purpose."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubeloop import Controller, Request
from kubeloop.cli.main import main
from kubeloop.client import UnknownResource
from kubeloop.controller import Context, ControllerSpec, Target
from kubeloop.resources.manifests import (
    Need,
    Operator,
    Resolver,
    Rule,
    UnresolvedKind,
    merge,
    needs,
    needs_from_audit,
)

WIDGETS: dict[str, Any] = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.x.dev"},
           "spec": {"group": "x.dev", "scope": "Namespaced", "names": {"kind": "Widget", "plural": "widgets"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}}}]}}
GADGETS: dict[str, Any] = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.x.dev"},
           "spec": {"group": "x.dev", "scope": "Cluster", "names": {"kind": "Gadget", "plural": "gadgets"},
                    "versions": [{"name": "v1", "served": True, "storage": True}]}}


async def reconcile(req: Request, ctx: Context) -> None:
    return None


def rules_of(*specs: ControllerSpec, lease: tuple[str, str] | None = None,
             informers: tuple[tuple[str, str | None], ...] = ()) -> Any:
    return merge(needs(Operator(specs, informers, lease), Resolver([WIDGETS, GADGETS])))


def verbs(rules: list[Rule], group: str, resource: str) -> set[str]:
    return {v for r in rules if group in r.api_groups and resource in r.resources for v in r.verbs}


def test_each_declaration_brings_its_rules() -> None:
    c = (Controller("w", for_="x.dev/v1/Widget", reconcile=reconcile, writes=["v1/Secret"])
         .owns("apps/v1/Deployment").watches("v1/Node", lambda obj: []))
    perms = rules_of(c.spec)
    assert perms.namespaced == {}
    rules = perms.cluster
    assert verbs(rules, "x.dev", "widgets") == {"get", "list", "watch", "update", "patch"}
    assert verbs(rules, "x.dev", "widgets/status") == {"update", "patch"}
    assert verbs(rules, "x.dev", "widgets/finalizers") == {"update"}
    assert verbs(rules, "apps", "deployments") == {"get", "list", "watch", "create", "update", "patch", "delete"}
    assert verbs(rules, "", "nodes") == {"get", "list", "watch"}
    assert verbs(rules, "", "secrets") == {"create", "update", "patch", "delete"}
    assert verbs(rules, "events.k8s.io", "events") == {"create", "patch"}
    assert verbs(rules, "", "events") == set()  # the recorder posts events.k8s.io/v1 only


def test_nothing_more_than_declared() -> None:
    c = Controller("g", for_="x.dev/v1/Gadget", reconcile=reconcile, record_events=False)
    rules = rules_of(c.spec).cluster
    assert [r.to_dict() for r in rules] == [
        {"apiGroups": ["x.dev"], "resources": ["gadgets"], "verbs": ["get", "list", "patch", "update", "watch"]}]


def test_a_namespaced_controller_gets_a_role_and_a_lease_rule_by_name() -> None:
    c = Controller("w", for_="x.dev/v1/Widget", reconcile=reconcile, namespace="team").owns(
        "v1/ConfigMap", namespace="team")
    perms = rules_of(c.spec, lease=("w-lock", "ops"))
    assert perms.cluster == []
    team = perms.namespaced["team"]
    assert verbs(team, "", "configmaps") == {"get", "list", "watch", "create", "update", "patch", "delete"}
    assert verbs(team, "events.k8s.io", "events") == {"create", "patch"}
    assert [r.to_dict() for r in perms.namespaced["ops"]] == [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": ["w-lock"],
         "verbs": ["get", "update"]}]


def test_a_cluster_scoped_kind_is_always_cluster_wide_and_its_events_go_to_default() -> None:
    c = Controller("g", for_="x.dev/v1/Gadget", reconcile=reconcile, namespace="team")
    perms = rules_of(c.spec)
    assert verbs(perms.cluster, "x.dev", "gadgets") == {"get", "list", "watch", "update", "patch"}
    assert verbs(perms.namespaced["default"], "events.k8s.io", "events") == {"create", "patch"}


def test_merge_drops_what_the_cluster_role_already_grants() -> None:
    perms = merge([Need("", "pods", frozenset({"get", "list"})), Need("", "pods", frozenset({"get"}), "a"),
                   Need("", "pods", frozenset({"delete"}), "a")])
    assert [r.to_dict() for r in perms.cluster] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]
    assert [r.to_dict() for r in perms.namespaced["a"]] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["delete"]}]


def test_resources_sharing_verbs_share_a_rule() -> None:
    c = (Controller("w", for_="v1/ConfigMap", reconcile=reconcile, record_events=False)
         .watches("v1/Secret", lambda o: []).watches("v1/Service", lambda o: []))
    rules = rules_of(c.spec).cluster
    assert {"apiGroups": [""], "resources": ["secrets", "services"], "verbs": ["get", "list", "watch"]} in [
        r.to_dict() for r in rules]


def test_manager_informers_need_read_access() -> None:
    c = Controller("g", for_="x.dev/v1/Gadget", reconcile=reconcile, record_events=False)
    perms = rules_of(c.spec, informers=(("v1/Pod", "team"),))
    assert verbs(perms.namespaced["team"], "", "pods") == {"get", "list", "watch"}


def test_targets_bring_cluster_wide_read_rules() -> None:
    """``targets=``: what ``ctx.watch_target`` reads; its caches watch all namespaces, so the rule is
    cluster-wide even for a namespaced controller; a kind unknown offline may be given by its plural."""
    c = Controller("p", for_="x.dev/v1/Widget", reconcile=reconcile, namespace="team", record_events=False,
                   targets=["apps/v1/Deployment", "helm.toolkit.fluxcd.io/v2/helmreleases"])
    perms = rules_of(c.spec)
    assert verbs(perms.cluster, "apps", "deployments") == {"get", "list", "watch"}
    assert verbs(perms.cluster, "helm.toolkit.fluxcd.io", "helmreleases") == {"get", "list", "watch"}
    assert verbs(perms.namespaced["team"], "x.dev", "widgets") == {"get", "list", "watch", "update", "patch"}
    unknown = Controller("p", for_="x.dev/v1/Widget", reconcile=reconcile,
                         targets=["helm.toolkit.fluxcd.io/v2/HelmRelease"])
    with pytest.raises(UnresolvedKind, match=r"name it by its plural: 'helm.toolkit.fluxcd.io/v2/<plural>'"):
        rules_of(unknown.spec)
    with pytest.raises(TypeError, match="list of kinds"):
        Controller("p", for_="x.dev/v1/Widget", reconcile=reconcile, targets="apps/v1/Deployment")
    assert rules_of(Controller("p", for_="x.dev/v1/Widget", reconcile=reconcile).spec) == rules_of(
        Controller("p", for_="x.dev/v1/Widget", reconcile=reconcile, targets=[]).spec)


def test_a_read_only_controller_gets_no_write_on_its_primary() -> None:
    """Issue 31 item 11: ``primary_writes`` says what the reconcile writes of its primary: by default
    the object (finalizers, metadata) and its status; ``"status"`` its status only; ``"none"``
    nothing, so its role reads the kind and writes nothing of it."""
    def primary(writes: Any) -> dict[str, set[str]]:
        rules = rules_of(Controller("w", for_="x.dev/v1/Widget", reconcile=reconcile, record_events=False,
                                    primary_writes=writes).spec).cluster
        return {r: verbs(rules, "x.dev", r) for r in ("widgets", "widgets/status")}

    assert primary("object") == {"widgets": {"get", "list", "watch", "update", "patch"},
                                 "widgets/status": {"update", "patch"}}
    assert primary("status") == {"widgets": {"get", "list", "watch"}, "widgets/status": {"update", "patch"}}
    assert primary("none") == {"widgets": {"get", "list", "watch"}, "widgets/status": set()}
    gadgets = rules_of(Controller("g", for_="x.dev/v1/Gadget", reconcile=reconcile, record_events=False,
                                  primary_writes="status").spec).cluster  # no status subresource: the object
    assert verbs(gadgets, "x.dev", "gadgets") == {"get", "list", "watch", "update", "patch"}
    with pytest.raises(ValueError, match="primary_writes must be"):
        Controller("w", for_="x.dev/v1/Widget", reconcile=reconcile, primary_writes="yes")  # type: ignore[arg-type]


def test_remote_and_namespaced_targets_grant_only_where_they_are_read() -> None:
    """A remote target gets no rule in the management cluster, and everything it needs in another one
    (``needs(..., cluster=...)``, behind ``--for-cluster``); a namespaced one a Role there."""
    c = Controller("p", for_="v1/ConfigMap", reconcile=reconcile, namespace="team", record_events=False,
                   clusters=["default"], targets=[Target("apps/v1/Deployment", remote=True),
                                                  Target("v1/Secret", namespace="vault")])
    perms = rules_of(c.spec)
    assert verbs(perms.cluster, "apps", "deployments") == set() and perms.cluster == []
    assert verbs(perms.namespaced["vault"], "", "secrets") == {"get", "list", "watch"}
    edge = merge(needs(Operator((c.spec,), lease=("p", "team")), Resolver([WIDGETS, GADGETS]), "edge"))
    assert [r.to_dict() for r in edge.cluster] == [
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list", "watch"]}]
    assert [r.to_dict() for r in edge.namespaced["vault"]] == [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch"]}]
    assert set(edge.namespaced) == {"vault"}  # no Lease, no primary: the controller runs on "default" only


def test_a_controller_on_every_cluster_needs_its_rules_in_each() -> None:
    c = Controller("f", for_="v1/ConfigMap", reconcile=reconcile, namespace="fleet").owns("v1/Secret")
    home = rules_of(c.spec, lease=("f", "fleet"), informers=(("v1/Pod", None),))
    edge = merge(needs(Operator((c.spec,), (("v1/Pod", None),), ("f", "fleet")), Resolver(), "edge"))
    assert verbs(edge.namespaced["fleet"], "", "configmaps") == verbs(home.namespaced["fleet"], "", "configmaps")
    assert verbs(edge.namespaced["fleet"], "", "secrets") == {"create", "update", "patch", "delete"}
    assert verbs(edge.cluster, "", "secrets") == {"get", "list", "watch"}  # its owns() watches every namespace
    assert verbs(edge.namespaced["fleet"], "coordination.k8s.io", "leases") == set()  # the Lease is at home
    assert verbs(edge.cluster, "", "pods") == set() and verbs(home.cluster, "", "pods") == {"get", "list", "watch"}


def test_clusters_from_secrets_gets_a_role_in_its_namespace(tmp_path: Path) -> None:
    module = tmp_path / "fleet_op.py"
    module.write_text(textwrap.dedent("""
        from kubeloop import Controller
        from kubeloop.manager import ClustersFromSecrets

        async def reconcile(req, ctx):
            return None

        def setup(manager):
            manager.add(Controller("cm", for_="v1/ConfigMap", reconcile=reconcile, record_events=False))
            manager.add_runnable(ClustersFromSecrets("fleet"))
    """))
    code, out = run_cli(str(module), "--no-leader-election", "-n", "ops")
    assert code == 0, out
    docs = list(yaml.safe_load_all(out))
    role = next(d for d in docs if d["kind"] == "Role")
    assert role["metadata"]["namespace"] == "fleet"
    assert role["rules"] == [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch"]}]
    binding = next(d for d in docs if d["kind"] == "RoleBinding")
    assert binding["metadata"]["namespace"] == "fleet" and binding["subjects"][0]["namespace"] == "ops"
    cluster_role = next(d for d in docs if d["kind"] == "ClusterRole")
    assert not [r for r in cluster_role["rules"] if "secrets" in r["resources"]]


def test_an_unknown_kind_is_a_clear_error() -> None:
    c = Controller("m", for_="y.dev/v1/Mystery", reconcile=reconcile)
    with pytest.raises(UnresolvedKind, match=r"cannot resolve y.dev/v1/Mystery offline.*--kubeconfig"):
        rules_of(c.spec)
    with pytest.raises(ValueError, match="Secrets"):
        Controller("m", for_="v1/ConfigMap", reconcile=reconcile, writes=["Secrets"])


def test_a_misspelt_kind_names_the_one_it_is_a_typo_of() -> None:
    """Issue 31 item 13: as `kubeloop run` does through discovery, offline resolution suggests a
    declared custom kind within an edit or two, and the closest built-in kind of a built-in group."""
    for typo, want in (("x.dev/v1/Widgit", "x.dev/v1/Widget"), ("x.dev/v1/gadgest", "x.dev/v1/Gadget"),
                       ("v1/ConfigMapp", "v1/ConfigMap"), ("apps/v1/Deploymnet", "apps/v1/Deployment")):
        c = Controller("m", for_=typo, reconcile=reconcile)
        with pytest.raises(UnresolvedKind, match=rf"cannot resolve {typo} offline \(did you mean '{want}'\?\)"):
            rules_of(c.spec)
    c = Controller("m", for_="x.dev/v1/Sprocket", reconcile=reconcile)  # no near miss: no guess
    with pytest.raises(UnresolvedKind, match=r"cannot resolve x.dev/v1/Sprocket offline: "):
        rules_of(c.spec)


def test_rules_from_an_audit() -> None:
    class Entry:
        def __init__(self, user: str, verb: str, group: str, resource: str, sub: str, ns: str) -> None:
            self.user, self.verb, self.api_group, self.resource, self.subresource, self.namespace = (
                user, verb, group, resource, sub, ns)

    entries = [Entry("op", "list", "", "pods", "", ""), Entry("op", "patch", "x.dev", "widgets", "status", "a"),
               Entry("test", "create", "", "namespaces", "", "")]
    perms = merge(needs_from_audit(entries, "op"))
    assert [r.to_dict() for r in perms.cluster] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]
    # a request in another namespace than the operator's own (a test's throwaway one) holds anywhere
    elsewhere = merge(needs_from_audit(entries, "op", home="ops"))
    assert elsewhere.namespaced == {} and {"apiGroups": ["x.dev"], "resources": ["widgets/status"],
                                           "verbs": ["patch"]} in [r.to_dict() for r in elsewhere.cluster]
    assert merge(needs_from_audit(entries, "op", home="a")).namespaced == perms.namespaced
    # a patch of an object may be an apply that creates it: kube-apiserver then authorizes create too
    applied = merge(needs_from_audit([Entry("op", "patch", "", "configmaps", "", ""),
                                      Entry("op", "patch", "", "pods", "status", "")]))
    assert [r.to_dict() for r in applied.cluster] == [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "patch"]},
        {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["patch"]}]
    # an informer's streaming list is observed as a watch; a 1.24 cluster serves it as LIST + WATCH
    watched = merge(needs_from_audit([Entry("op", "watch", "", "configmaps", "", "")]))
    assert [r.to_dict() for r in watched.cluster] == [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list", "watch"]}]
    assert [r.to_dict() for r in perms.namespaced["a"]] == [
        {"apiGroups": ["x.dev"], "resources": ["widgets/status"], "verbs": ["patch"]}]


# ---------------------------------------------------------------------- the command

def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["manifests", *args])
    return result.exit_code, result.stdout if result.exit_code == 0 else result.output


def test_typed_resources_give_the_crd_and_the_kind(tmp_path: Path) -> None:
    module = tmp_path / "typed_op.py"
    module.write_text(textwrap.dedent("""
        from kubeloop import Controller
        from kubeloop.resources import CustomResource, Model

        class Spec(Model):
            size: int = 1

        class Status(Model):
            ready: bool = False

        class Bucket(CustomResource, group="store.example.com", version="v1"):
            spec: Spec = Spec()
            status: Status | None = None

        async def reconcile(req, ctx):
            return None

        controllers = [Controller("buckets", for_=Bucket.resource(), reconcile=reconcile, writes=["v1/Secret"])]
    """))
    code, out = run_cli(str(module), "--no-leader-election", "-n", "store")
    assert code == 0, out
    docs = list(yaml.safe_load_all(out))
    assert [d["kind"] for d in docs] == ["CustomResourceDefinition", "ServiceAccount", "ClusterRole",
                                         "ClusterRoleBinding", "Deployment"]
    assert docs[0]["metadata"]["name"] == "buckets.store.example.com"
    rules = docs[2]["rules"]
    assert {"apiGroups": ["store.example.com"], "resources": ["buckets/status"], "verbs": ["patch", "update"]} in rules
    assert {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create", "delete", "patch", "update"]} in rules
    args = docs[-1]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--leader-election" not in args and args[:2] == ["run", "typed_op"]


def test_errors_are_one_line(tmp_path: Path) -> None:
    module = tmp_path / "mystery_op.py"
    module.write_text(textwrap.dedent("""
        from kubeloop import Controller

        async def reconcile(req, ctx):
            return None

        controllers = [Controller("m", for_="y.dev/v1/Mystery", reconcile=reconcile)]
    """))
    code, out = run_cli(str(module))
    assert code == 1
    assert out.startswith("Error: cannot resolve y.dev/v1/Mystery offline") and out.count("\n") == 1
    code, out = run_cli(str(tmp_path / "missing.py"))
    assert code == 1 and "no such file" in out


def test_observe_learns_the_rules_from_a_test_run(tmp_path: Path) -> None:
    module = tmp_path / "plain_op.py"
    module.write_text(textwrap.dedent("""
        from kubeloop import Controller

        async def reconcile(req, ctx):
            return None

        controllers = [Controller("plain", for_="v1/ConfigMap", reconcile=reconcile)]
    """))
    (tmp_path / "test_plain_op.py").write_text(textwrap.dedent("""
        import asyncio

        from kubeloop import Client
        from kubeloop.testing import APIServer

        def test_it():
            async def run():
                async with APIServer() as api:
                    client = await Client.from_kubeconfig(api.kubeconfig)
                    await client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                         "metadata": {"name": "c", "namespace": "default"}})
                    await client.list("v1/Secret", namespace="default")
                    async with SharedCache(client) as cache:  # an informer, as the operator's
                        handle = await cache.informer_for(resource="v1/Service", namespace="default")
                        await handle.wait_synced(10)
                        await client.create({"apiVersion": "v1", "kind": "Service",  # seen by its watch
                                             "metadata": {"name": "s", "namespace": "default"},
                                             "spec": {"ports": [{"port": 80}]}})
                        async with asyncio.timeout(10):
                            while handle.get("s", "default") is None:
                                await asyncio.sleep(0.02)
                        handle.release()
                    await client.close()
            asyncio.run(run())
    """).replace("from kubeloop import Client", "from kubeloop import Client\nfrom kubeloop.cache import SharedCache"))
    code, out = run_cli(str(module), "--observe", str(tmp_path / "test_plain_op.py"), "--no-leader-election")
    assert code == 0, out
    role = next(d for d in yaml.safe_load_all(out) if d["kind"] == "Role")
    assert role["metadata"]["namespace"] == "default"
    assert {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]} in role["rules"]
    assert {"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]} in role["rules"]
    # the informer lists, then watches
    assert {"apiGroups": [""], "resources": ["services"], "verbs": ["create", "list", "watch"]} in role["rules"]
    # the Deployment runs leader election: its Lease's rules come with the observed ones
    code, out = run_cli(str(module), "--observe", str(tmp_path / "test_plain_op.py"), "--name", "plain")
    assert code == 0, out
    role = next(d for d in yaml.safe_load_all(out) if d["kind"] == "Role")
    assert {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": ["plain"],
            "verbs": ["get", "update"]} in role["rules"]
    assert {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]} in role["rules"]


def test_environment_variables_and_the_image(tmp_path: Path) -> None:
    """Issue 31 item 12: ``--env NAME=VALUE`` sets the container's environment; without ``--image``
    the image is NAME-operator:latest (never the module's bare name, which may be the operand's
    image) and stderr says what the image must hold."""
    module = tmp_path / "memcached.py"
    module.write_text("from kubeloop import Controller\n\nasync def reconcile(req, ctx):\n    return None\n\n"
                      "controllers = [Controller('m', for_='v1/ConfigMap', reconcile=reconcile)]\n")
    result = CliRunner().invoke(main, ["manifests", str(module), "--env", "LOG_LEVEL=debug", "--env", "EMPTY=",
                                       "--env", "LOG_LEVEL=info", "--env", "URL=http://x/?a=b"])
    assert result.exit_code == 0, result.output
    container = [d for d in yaml.safe_load_all(result.stdout)][-1]["spec"]["template"]["spec"]["containers"][0]
    assert container["env"] == [{"name": "EMPTY", "value": ""}, {"name": "LOG_LEVEL", "value": "info"},
                                {"name": "URL", "value": "http://x/?a=b"}]
    assert container["image"] == "memcached-operator:latest"
    assert "no --image given" in result.stderr and "kubeloop and 'memcached' importable" in result.stderr
    with_image = CliRunner().invoke(main, ["manifests", str(module), "--image", "example/memcached-op:1"])
    assert with_image.stderr == "" and "image: example/memcached-op:1" in with_image.stdout
    assert "env:" not in with_image.stdout
    code, out = run_cli(str(module), "--env", "1BAD=x")
    assert code == 1 and out.startswith("Error: environment variable '1BAD=x' must be NAME=VALUE")


def test_for_cluster_prints_the_rbac_another_cluster_needs(tmp_path: Path) -> None:
    module = tmp_path / "promoter.py"
    module.write_text(textwrap.dedent("""
        from kubeloop import Controller
        from kubeloop.controller import Target

        async def reconcile(req, ctx):
            return None

        controllers = [Controller("promote", for_="v1/ConfigMap", reconcile=reconcile, clusters=["default"],
                                  targets=[Target("apps/v1/Deployment", remote=True),
                                           Target("v1/Secret", namespace="releases")])]
    """))
    code, out = run_cli(str(module), "-n", "ops")
    assert code == 0, out
    home = list(yaml.safe_load_all(out))
    cluster_role = next(d for d in home if d["kind"] == "ClusterRole")
    assert not [r for r in cluster_role["rules"] if "deployments" in r["resources"]]  # remote: not here
    code, out = run_cli(str(module), "-n", "ops", "--for-cluster", "edge")
    assert code == 0, out
    edge = list(yaml.safe_load_all(out))
    assert [(d["kind"], d["metadata"].get("namespace")) for d in edge] == [
        ("ServiceAccount", "ops"), ("ClusterRole", None), ("ClusterRoleBinding", None), ("Role", "releases"),
        ("RoleBinding", "releases")]
    assert edge[1]["rules"] == [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list", "watch"]}]
    assert edge[3]["rules"] == [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch"]}]
    assert edge[4]["subjects"] == [{"kind": "ServiceAccount", "name": "promoter", "namespace": "ops"}]


async def test_kubeconfig_resolves_kinds_the_module_does_not_declare(tmp_path: Path, emulator: Any) -> None:
    from kubeloop import Client

    module = tmp_path / "foreign_op.py"
    module.write_text(textwrap.dedent("""
        from kubeloop import Controller

        async def reconcile(req, ctx):
            return None

        controllers = [Controller("w", for_="x.dev/v1/Widget", reconcile=reconcile, record_events=False)]
    """))
    code, out = await asyncio.to_thread(run_cli, str(module), "--no-leader-election")
    assert code == 1 and "x.dev/v1/Widget" in out
    client = await Client.from_kubeconfig(emulator.kubeconfig)
    try:
        schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
        await client.create({**WIDGETS, "spec": {**WIDGETS["spec"], "versions": [
            {**WIDGETS["spec"]["versions"][0], "schema": schema}]}})
        async with asyncio.timeout(10):
            while True:
                try:
                    await client.resolve("x.dev/v1/Widget")
                    break
                except UnknownResource:
                    await asyncio.sleep(0.02)
    finally:
        await client.close()
    code, out = await asyncio.to_thread(run_cli, str(module), "--no-leader-election", "--kubeconfig",
                                        emulator.kubeconfig)
    assert code == 0, out
    role = next(d for d in yaml.safe_load_all(out) if d["kind"] == "ClusterRole")
    assert {"apiGroups": ["x.dev"], "resources": ["widgets/status"], "verbs": ["patch", "update"]} in role["rules"]


def test_a_setup_that_contacts_the_cluster_is_refused(tmp_path: Path) -> None:
    module = tmp_path / "eager_op.py"
    module.write_text(textwrap.dedent("""
        from kubeloop import Controller

        async def reconcile(req, ctx):
            return None

        async def setup(manager):
            await manager.client().list("v1/ConfigMap")
            manager.add(Controller("c", for_="v1/ConfigMap", reconcile=reconcile))
    """))
    code, out = run_cli(str(module))
    assert code == 1
    assert "setup(manager) contacted the cluster" in out and out.count("\n") == 1


WEBHOOK_EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "webhooks" / "operator.py")


def rules_of_kind(docs: list[dict[str, Any]], kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
    return [r for d in docs if d["kind"] == kind and (namespace is None or d["metadata"].get("namespace") == namespace)
            for r in d["rules"]]


def test_webhooks_bring_their_configurations_service_conversion_and_certificate_rbac() -> None:
    code, out = run_cli(WEBHOOK_EXAMPLE, "-n", "ops", "--name", "widgets", "--image", "w:1")
    assert code == 0, out
    docs = list(yaml.safe_load_all(out))
    assert [d["kind"] for d in docs] == ["CustomResourceDefinition", "ServiceAccount", "ClusterRole",
                                         "ClusterRoleBinding", "Role", "RoleBinding", "Service", "Deployment",
                                         "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]
    service = {"namespace": "ops", "name": "widgets-webhook", "port": 443}
    conversion = docs[0]["spec"]["conversion"]
    assert conversion == {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {
        "service": {**service, "path": "/convert"}}}}
    for configuration in docs[-2:]:
        assert configuration["metadata"]["name"] == "widgets.webhooks.examples.kubeloop.dev"
        (hook,) = configuration["webhooks"]
        assert hook["clientConfig"]["service"] == {**service, "path": hook["clientConfig"]["service"]["path"]}
        assert "caBundle" not in hook["clientConfig"]  # the operator injects it
    svc = docs[6]
    assert svc["spec"] == {"selector": {"app.kubernetes.io/name": "widgets"}, "publishNotReadyAddresses": True,
                           "ports": [{"name": "webhook", "port": 443, "targetPort": "webhook", "protocol": "TCP"}]}
    assert docs[7]["spec"]["selector"]["matchLabels"] == svc["spec"]["selector"]
    container = docs[7]["spec"]["template"]["spec"]["containers"][0]
    assert {"name": "webhook", "containerPort": 9443} in container["ports"]
    assert container["args"][-6:] == ["--webhook-port", "9443", "--webhook-service", "widgets-webhook",
                                      "--webhook-secret", "widgets-webhook-tls"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"  # the Manager's: the webhook server in it
    names = ["widgets.webhooks.examples.kubeloop.dev"]
    assert rules_of_kind(docs, "ClusterRole") == [
        {"apiGroups": ["admissionregistration.k8s.io"],
         "resources": ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
         "resourceNames": names, "verbs": ["get", "update"]},
        {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "resourceNames": names,
         "verbs": ["get", "update"]}]
    role = rules_of_kind(docs, "Role", "ops")
    assert {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]} in role
    assert {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["widgets-webhook-tls"],
            "verbs": ["get", "update"]} in role


def test_cert_manager_mode_and_the_migration() -> None:
    code, out = run_cli(WEBHOOK_EXAMPLE, "-n", "ops", "--name", "widgets", "--image", "w:1", "--webhook-port", "8443",
                        "--webhook-cert-manager", "--webhook-migrate")
    assert code == 0, out
    docs = list(yaml.safe_load_all(out))
    kinds = [d["kind"] for d in docs]
    assert kinds[-5:] == ["Issuer", "Certificate", "Deployment", "MutatingWebhookConfiguration",
                          "ValidatingWebhookConfiguration"]
    inject = {"cert-manager.io/inject-ca-from": "ops/widgets-webhook"}
    for d in docs:
        if d["kind"] in ("CustomResourceDefinition", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            assert d["metadata"]["annotations"] == inject, d["kind"]
    certificate = docs[kinds.index("Certificate")]
    assert certificate["spec"] == {"secretName": "widgets-webhook-tls",
                                   "dnsNames": ["widgets-webhook", "widgets-webhook.ops", "widgets-webhook.ops.svc",
                                                "widgets-webhook.ops.svc.cluster.local"],
                                   "issuerRef": {"kind": "Issuer", "name": "widgets-webhook"}}
    pod = docs[kinds.index("Deployment")]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["args"][-5:] == ["--webhook-port", "8443", "--webhook-cert-dir",
                                      "/tmp/k8s-webhook-server/serving-certs", "--webhook-migrate"]
    assert {"name": "webhook", "containerPort": 8443} in container["ports"]
    assert container["volumeMounts"] == [{"name": "secret-0", "mountPath": "/tmp/k8s-webhook-server/serving-certs",
                                          "readOnly": True}]
    assert pod["volumes"] == [{"name": "secret-0", "secret": {"secretName": "widgets-webhook-tls"}}]
    cluster = rules_of_kind(docs, "ClusterRole")
    assert not [r for r in cluster if "mutatingwebhookconfigurations" in r["resources"]]  # cert-manager injects
    assert not [r for r in rules_of_kind(docs, "Role") if "secrets" in r["resources"]]
    names = ["widgets.webhooks.examples.kubeloop.dev"]
    assert cluster == [
        {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "resourceNames": names,
         "verbs": ["get"]},
        {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions/status"],
         "resourceNames": names, "verbs": ["patch", "update"]},
        {"apiGroups": ["webhooks.examples.kubeloop.dev"], "resources": ["widgets"], "verbs": ["list", "update"]}]


def test_webhooks_registered_in_setup_count_too(tmp_path: Path) -> None:
    module = tmp_path / "hooked_op.py"
    module.write_text(textwrap.dedent("""
        from kubeloop.webhooks import Webhooks, allow

        hooks = Webhooks("pods.hooked.dev")

        @hooks.validating("v1/pods")
        def look(req):
            return allow()

        def setup(manager):
            manager.add_webhooks(hooks)
    """))
    code, out = run_cli(str(module), "--no-leader-election", "-n", "ops")
    assert code == 0, out
    docs = list(yaml.safe_load_all(out))
    assert [d["kind"] for d in docs] == ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
                                         "Service", "Deployment", "ValidatingWebhookConfiguration"]
    assert docs[-1]["webhooks"][0]["clientConfig"]["service"]["name"] == "hooked-op-webhook"
    assert not [r for r in docs[1]["rules"] if "customresourcedefinitions" in r["resources"]]  # converts nothing
