"""The objects `benchmarks.versus` lists: realistic ones by default (``--objects-kind realistic``),
or the peers benchmark's hash-derived ones (``random``).

Realistic ConfigMaps hold small configuration files (nginx, properties, logging YAML) and Helm
labels and annotations; realistic Pods are a Deployment's replicas (labels, annotations, one
container with ports, env, resources, tolerations). Both come from `benchmarks/store_objects.py`,
made creatable: no uid, resourceVersion, timestamps, managedFields or status (the server sets
them: its managedFields, its defaults, and for Pods the ServiceAccount admission's projected
token volume), no owner references and no node (the real cluster's garbage collector and pod
garbage collector would delete them). Each carries the label both sides index by.
The random ones (`benchmarks.peers.seed`) are hex text, which nothing compresses below ~0.4x of
its JSON: a bound of the objects, not of a cache.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from benchmarks.peers import seed
from benchmarks.peers.operators.report import LABEL

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from store_objects import make_configmap, make_pod

KINDS = ("realistic", "random")


def _creatable(obj: dict[str, Any], name: str, i: int) -> dict[str, Any]:
    md = obj["metadata"]
    for k in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "ownerReferences", "namespace",
              "generateName"):
        md.pop(k, None)
    md["name"] = name
    md["labels"][LABEL] = f"g{i % seed.GROUPS}"
    obj.pop("status", None)
    return obj


def realistic_configmap(i: int) -> dict[str, Any]:
    return _creatable(make_configmap(i), f"cm-{i:06d}", i)


def realistic_pod(i: int) -> dict[str, Any]:
    pod = _creatable(make_pod(i), f"pod-{i:06d}", i)
    spec = pod["spec"]
    for k in ("nodeName", "serviceAccount"):
        spec.pop(k, None)
    for c in spec["containers"]:
        c.pop("volumeMounts", None)  # the ServiceAccount admission adds the token volume's mount
    return pod


def makers(objects_kind: str) -> dict[str, Any]:
    """The object factory per plural kind."""
    if objects_kind == "random":
        return {"configmaps": seed.configmap, "pods": seed.pod}
    return {"configmaps": realistic_configmap, "pods": realistic_pod}


def namespace(objects_kind: str, kind: str, n: int) -> str:
    """Where `n` objects of `kind` live (random ones in the namespaces earlier runs made)."""
    return f"versus-{kind}-{n}" if objects_kind == "random" else f"versus-real-{kind}-{n}"
