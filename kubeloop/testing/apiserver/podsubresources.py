"""The pod subresources that need a node, answered as kube-apiserver answers them without one, and
the two that change a pod: binding and eviction.

There is no kubelet: `log`, `exec`, `attach` and `portforward` go as far as kube-apiserver goes
before it dials one (the pod, its container, its node and the node's address are checked, with the
same errors), then report the kubelet unreachable as kube-apiserver does when nothing listens. A
Pending pod without a node has no log yet: 204 No Content, as on a real cluster. Proxies report
the address they would dial. `binding` assigns a node (what a scheduler does); `eviction` deletes
a pod unless a PodDisruptionBudget forbids it, with the real checks and their 429/500 answers.
"""

from __future__ import annotations

import copy
from typing import Any

from aiohttp import web

from kubeloop.meta import MODIFIED

from . import errors
from .actions import Call, success
from .errors import StatusError
from .kinds.apps import selector_matches
from .objectmeta import now_rfc3339
from .resources import ServedResource
from .shapes import Obj

#: kube-apiserver's `--kubelet-preferred-address-types` default order
PREFERRED_ADDRESSES = ("Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP")
KUBELET_PORT = 10250
LOG_INT_OPTIONS = ("tailLines", "limitBytes", "sinceSeconds")


def _info(call: Call, group: str, version: str, resource: str) -> ServedResource:
    info = call.registry.catalog.lookup(group, version, resource)
    assert info is not None, resource
    return info


def _get(call: Call, resource: str, namespace: str, name: str, group: str = "", version: str = "v1") -> Obj:
    info = _info(call, group, version, resource)
    return call.registry.view(info, call.registry.get(info, namespace, name))


def _container(pod: Obj, wanted: str) -> str:
    """`validateContainer`: the one container, or the named one (400 otherwise)."""
    spec = pod.get("spec") or {}
    name = (pod.get("metadata") or {}).get("name", "")
    containers = [c.get("name", "") for c in spec.get("containers") or []]
    inits = [c.get("name", "") for c in spec.get("initContainers") or []]
    ephemeral = [c.get("name", "") for c in spec.get("ephemeralContainers") or []]
    if not wanted:
        if len(containers) == 1:
            return containers[0]
        msg = f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]"
        if inits:
            msg += f" or one of the init containers: [{' '.join(inits)}]"
        if ephemeral:
            msg += f" or one of the ephemeral containers: [{' '.join(ephemeral)}]"
        raise errors.bad_request(msg)
    if wanted not in containers + inits + ephemeral:
        raise errors.bad_request(f"container {wanted} is not valid for pod {name}")
    return wanted


def _node_address(call: Call, node_name: str) -> tuple[str, int]:
    """The address kube-apiserver would dial for `node_name`'s kubelet (the node's errors otherwise:
    a missing node is reported as a missing *pod* of that name, as 1.24 words it)."""
    info = _info(call, "", "v1", "nodes")
    stored = call.registry.bucket(info).objects.get(("", node_name))
    if stored is None:
        raise errors.not_found("pods", node_name)
    status = stored.obj.get("status") or {}
    addresses = [a for a in status.get("addresses") or [] if isinstance(a, dict)]
    for kind in PREFERRED_ADDRESSES:
        for a in addresses:
            if a.get("type") == kind and a.get("address"):
                port = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port") or 0
                return str(a["address"]), int(port) or KUBELET_PORT
    known = " ".join(f"{{{a.get('type', '')} {a.get('address', '')}}}" for a in addresses)
    raise StatusError(500, "", f"no preferred addresses found; known addresses: [{known}]")


def _unreachable(url: str, host: str, port: int) -> StatusError:
    return StatusError(500, "", f'Get "{url}": dial tcp {host}:{port}: connect: connection refused')


def _int_option(call: Call, key: str) -> int | None:
    text = call.request.query.get(key)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{text}": invalid syntax') from None


async def log(call: Call) -> web.StreamResponse:
    """`GET pods/<name>/log`."""
    pod = _get(call, "pods", call.namespace, call.name)
    causes = []
    for key, minimum, text in (("tailLines", 0, "must be greater than or equal to 0"),
                               ("limitBytes", 1, "must be greater than 0"), ("sinceSeconds", 1, "must be greater than 0")):
        value = _int_option(call, key)
        if value is not None and value < minimum:
            causes.append(errors.cause("FieldValueInvalid", f"Invalid value: {value}: {text}", key))
    if call.request.query.get("sinceSeconds") and call.request.query.get("sinceTime"):
        causes.append(errors.cause("FieldValueForbidden", "Forbidden: at most one of `sinceTime` or `sinceSeconds` "
                                                          "may be specified", ""))
    if causes:
        raise errors.invalid("PodLogOptions", call.name, causes)
    container = _container(pod, call.request.query.get("container", ""))
    node = (pod.get("spec") or {}).get("nodeName") or ""
    if not node:
        return web.Response(status=204)  # no node, no log yet
    host, port = _node_address(call, node)
    raise _unreachable(f"https://{host}:{port}/containerLogs/{call.namespace}/{call.name}/{container}", host, port)


async def stream(call: Call) -> web.StreamResponse:
    """`exec`, `attach` and `portforward`: checked as far as the kubelet, which is not there."""
    pod = _get(call, "pods", call.namespace, call.name)
    container = ""
    if call.subresource != "portforward":
        container = _container(pod, call.request.query.get("container", ""))
    node = (pod.get("spec") or {}).get("nodeName") or ""
    if not node:
        raise errors.bad_request(f"pod {call.name} does not have a host assigned")
    host, port = _node_address(call, node)
    path = {"exec": "exec", "attach": "attach", "portforward": "portForward"}[call.subresource]
    suffix = f"/{container}" if container else ""
    raise _unreachable(f"https://{host}:{port}/{path}/{call.namespace}/{call.name}{suffix}", host, port)


def _proxy_error(host: str, port: int) -> StatusError:
    return StatusError(503, "ServiceUnavailable",
                       f"error trying to reach service: dial tcp {host}:{port}: connect: connection refused")


async def pod_proxy(call: Call) -> web.StreamResponse:
    pod = _get(call, "pods", call.namespace, call.name)
    ip = (pod.get("status") or {}).get("podIP") or ""
    if not ip:
        raise errors.bad_request("address not allowed")
    raise _proxy_error(ip, 80)


async def node_proxy(call: Call) -> web.StreamResponse:
    _get(call, "nodes", "", call.name)
    try:
        host, port = _node_address(call, call.name)
    except StatusError as e:
        if e.code == 404:
            raise errors.not_found("nodes", call.name) from None
        raise
    raise _proxy_error(host, port)


async def service_proxy(call: Call) -> web.StreamResponse:
    _get(call, "services", call.namespace, call.name)
    info = _info(call, "", "v1", "endpoints")
    endpoints = call.registry.bucket(info).objects.get((call.namespace, call.name))
    if endpoints is None:
        raise errors.not_found("services", call.name)  # 1.24 names the service, not its endpoints
    for subset in endpoints.obj.get("subsets") or []:
        for address in subset.get("addresses") or []:
            port = (subset.get("ports") or [{}])[0].get("port") or 80
            raise _proxy_error(address.get("ip", ""), int(port))
    raise StatusError(503, "ServiceUnavailable", f'no endpoints available for service "{call.name}"')


# ---- binding ----------------------------------------------------------------------------------------

async def binding(call: Call) -> web.StreamResponse:
    """`POST pods/<name>/binding` or `POST bindings`: assign the pod to a node, once."""
    body = await call.body()
    name = call.name or str((body.get("metadata") or {}).get("name") or "")
    target = body.get("target") or {}
    node = str(target.get("name") or "")
    if target.get("kind") not in (None, "", "Node"):
        raise errors.bad_request(f"Binding target kind must be Node, not {target.get('kind')}")
    info = _info(call, "", "v1", "pods")
    bucket = call.registry.bucket(info)
    old = bucket.objects.get((call.namespace, name))
    if old is None:
        raise errors.not_found("pods", name)
    if (old.obj.get("spec") or {}).get("nodeName"):
        raise errors.conflict("pods/binding", name, message=(
            f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is already assigned to node '
            f'"{old.obj["spec"]["nodeName"]}"'))
    if old.obj["metadata"].get("deletionTimestamp"):
        raise errors.conflict("pods/binding", name, message=(
            f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is being deleted, cannot be '
            "assigned to a host"))
    if call.dry_run():
        return success()
    pod = call.registry.view(info, old)
    pod["spec"]["nodeName"] = node
    annotations = (body.get("metadata") or {}).get("annotations") or {}
    if annotations:
        pod["metadata"].setdefault("annotations", {}).update(annotations)
    conditions = pod.setdefault("status", {}).setdefault("conditions", [])
    conditions[:] = [c for c in conditions if c.get("type") != "PodScheduled"]
    conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                       "lastTransitionTime": now_rfc3339()})
    call.registry.store.commit(bucket, MODIFIED, call.registry.to_stored_form(info, pod), old)
    return success()


# ---- eviction ---------------------------------------------------------------------------------------

def _too_many(message: str, retry_after: int) -> StatusError:
    details: dict[str, Any] = {"causes": [{"reason": "DisruptionBudget", "message": message}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return StatusError(429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.",
                       details, retry_after=retry_after or None)


def _pod_ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _ignores_budgets(pod: Obj) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or bool(pod["metadata"].get("deletionTimestamp"))


async def eviction(call: Call) -> web.StreamResponse:
    """`POST pods/<name>/eviction` (policy/v1 or v1beta1 Eviction), as 1.24's EvictionREST."""
    body = await call.body()
    if str((body.get("metadata") or {}).get("name") or "") != call.name:
        raise errors.bad_request("name in URL does not match name in Eviction object")
    options: Obj = dict(body.get("deleteOptions") or {})
    query_dry = call.request.query.getall("dryRun", [])
    if query_dry and options.get("dryRun") and list(options["dryRun"]) != query_dry:
        raise StatusError(500, "", f"Non-matching dry-run options in request and content: {query_dry} and "
                                   f"{options['dryRun']}")
    dry_run = call.registry.check_dry_run(list(options.get("dryRun") or query_dry), "DeleteOptions")
    pods = _info(call, "", "v1", "pods")
    pod = _get(call, "pods", call.namespace, call.name)
    if not _ignores_budgets(pod):
        budgets = _budgets_of(call, pod)
        if len(budgets) > 1:
            return web.Response(status=500, content_type="application/json", body=(
                b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"This pod has more '
                b'than one PodDisruptionBudget, which the eviction subresource does not support.","code":500}\n'))
        if budgets and not (not _pod_ready(pod) and _healthy_enough(budgets[0])):
            _take_disruption(call, budgets[0], dry_run)
    opts = call.registry.parse_delete_options(options, {})
    call.registry.delete(pods, call.namespace, call.name, opts, dry_run=dry_run)
    return success()


def _budgets_of(call: Call, pod: Obj) -> list[Obj]:
    info = _info(call, "policy", "v1", "poddisruptionbudgets")
    labels = pod["metadata"].get("labels") or {}
    out = []
    for (ns, _), st in sorted(call.registry.bucket(info).objects.items()):
        if ns != call.namespace:
            continue
        budget = call.registry.view(info, st)
        selector = (budget.get("spec") or {}).get("selector")
        if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
            continue  # a missing or empty selector selects nothing here
        if selector_matches(selector, labels):
            out.append(budget)
    return out


def _healthy_enough(budget: Obj) -> bool:
    status = budget.get("status") or {}
    return int(status.get("currentHealthy") or 0) >= int(status.get("desiredHealthy") or 0) > 0


def _take_disruption(call: Call, budget: Obj, dry_run: bool) -> None:
    """`checkAndDecrement`: refuse, or record the disruption in the budget's status."""
    name = budget["metadata"]["name"]
    status = budget.get("status") or {}
    if int(status.get("observedGeneration") or 0) < int(budget["metadata"].get("generation") or 0):
        raise _too_many(f"The disruption budget {name} is still being processed by the server.", 10)
    allowed = int(status.get("disruptionsAllowed") or 0)
    if allowed < 0:
        raise errors.forbidden(f'poddisruptionbudget.policy "{name}" is forbidden: pdb disruptions allowed is '
                               "negative", {"name": name, "group": "policy", "kind": "poddisruptionbudget"})
    if len(status.get("disruptedPods") or {}) > 2000:
        raise errors.forbidden(f'poddisruptionbudget.policy "{name}" is forbidden: DisruptedPods map too big - too '
                               "many evictions not confirmed by PDB controller",
                               {"name": name, "group": "policy", "kind": "poddisruptionbudget"})
    if allowed == 0:
        raise _too_many(f"The disruption budget {name} needs {status.get('desiredHealthy') or 0} healthy pods and "
                        f"has {status.get('currentHealthy') or 0} currently", 0)
    if dry_run:
        return
    updated = copy.deepcopy(budget)
    new_status = updated.setdefault("status", {})
    new_status["disruptionsAllowed"] = allowed - 1
    if allowed - 1 == 0:
        set_disruption_allowed(new_status, budget["metadata"].get("generation"), False)
    new_status.setdefault("disruptedPods", {})[call.name] = now_rfc3339()
    info = _info(call, "policy", "v1", "poddisruptionbudgets")
    call.registry.update(info, call.namespace, name, updated, manager="kube-apiserver", dry_run=False,
                         subresource="status")


def set_disruption_allowed(status: Obj, generation: Any, allowed: bool) -> None:
    """`UpdateDisruptionAllowedCondition`: the DisruptionAllowed condition (time kept unless it flips)."""
    reason = "SufficientPods" if allowed else "InsufficientPods"
    want = "True" if allowed else "False"
    conditions = status.setdefault("conditions", [])
    for c in conditions:
        if c.get("type") == "DisruptionAllowed":
            if c.get("status") != want:
                c["lastTransitionTime"] = now_rfc3339()
            c.update(status=want, reason=reason, message="", observedGeneration=generation)
            return
    conditions.append({"type": "DisruptionAllowed", "status": want, "observedGeneration": generation,
                       "lastTransitionTime": now_rfc3339(), "reason": reason, "message": ""})
