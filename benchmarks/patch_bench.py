"""CPU cost of the emulator's pure write-path helpers: patches, managedFields and server-side apply.

Every write to the emulator runs one of these, so their cost bounds how many writes per second the
emulator can serve. Objects: a ConfigMap of ~1 KiB (20 keys) and a Deployment with two containers.

Usage: python benchmarks/patch_bench.py [--repeat N]
Writes benchmarks/results/patch.json and prints a table (microseconds per call, best of 3 runs).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from kubeloop.testing.apiserver.listtypes import builtin_list_types  # noqa: E402
from kubeloop.testing.apiserver.managedfields import apply, update_managed_fields  # noqa: E402
from kubeloop.testing.apiserver.patch import (  # noqa: E402
    deep_copy,
    json_merge_patch,
    json_patch,
    strategic_merge_patch,
)

CM = builtin_list_types("", "ConfigMap")
DEPLOY = builtin_list_types("apps", "Deployment")
T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z"


def configmap() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "ns", "labels": {"app": "x"}},
            "data": {f"key-{i}": "v" * 40 for i in range(20)}}


def deployment() -> dict[str, Any]:
    c = {"image": "nginx:1.21", "imagePullPolicy": "IfNotPresent", "resources": {},
         "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
         "ports": [{"containerPort": 80, "protocol": "TCP"}], "env": [{"name": "A", "value": "1"}]}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ns"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "main", **c}, {"name": "side", **c}],
                                           "dnsPolicy": "ClusterFirst", "restartPolicy": "Always"}}}}


def created(obj: dict[str, Any], lt: Any) -> dict[str, Any]:
    o = deep_copy(obj)
    update_managed_fields(None, o, "creator", o["apiVersion"], None, T0, lt)
    return o


def cases() -> dict[str, Callable[[], Any]]:
    cm, dep = created(configmap(), CM), created(deployment(), DEPLOY)
    cm_cfg = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"key-0": "v" * 40}}
    cm_applied = apply(cm, cm_cfg, "ctl", "v1", None, True, T1, CM)
    dep_cfg = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
               "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "main", "image": "nginx:2"}]}}}}
    dep_applied = apply(dep, dep_cfg, "ctl", "apps/v1", None, True, T1, DEPLOY)

    def cm_update() -> None:
        new = deep_copy(cm)
        new["data"]["key-1"] = "changed"
        update_managed_fields(cm, new, "editor", "v1", None, T1, CM)

    def cm_noop() -> None:
        update_managed_fields(cm, deep_copy(cm), "editor", "v1", None, T1, CM)

    return {
        "deep_copy configmap": lambda: deep_copy(cm),
        "create configmap: managedFields": lambda: created(configmap(), CM),
        "update configmap: managedFields": cm_update,
        "no-op update configmap": cm_noop,
        "merge patch configmap": lambda: json_merge_patch(cm, {"data": {"key-1": "x", "key-2": None}}),
        "json patch configmap (2 ops)": lambda: json_patch(cm, [
            {"op": "replace", "path": "/data/key-1", "value": "x"}, {"op": "remove", "path": "/data/key-2"}]),
        "strategic patch deployment": lambda: strategic_merge_patch(dep, {"spec": {"template": {"spec": {
            "containers": [{"name": "main", "image": "nginx:3"}]}}}}, DEPLOY),
        "create deployment: managedFields": lambda: created(deployment(), DEPLOY),
        "apply configmap (first, force)": lambda: apply(cm, cm_cfg, "ctl", "v1", None, True, T1, CM),
        "apply configmap (identical)": lambda: apply(cm_applied, cm_cfg, "ctl", "v1", None, False, T1, CM),
        "apply deployment (first, force)": lambda: apply(dep, dep_cfg, "ctl", "apps/v1", None, True, T1, DEPLOY),
        "apply deployment (identical)": lambda: apply(dep_applied, dep_cfg, "ctl", "apps/v1", None, False, T1,
                                                      DEPLOY),
    }


def measure(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - t0) / repeat)
    return best * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2000, help="calls per run (default 2000)")
    args = ap.parse_args()
    results = {name: round(measure(fn, args.repeat), 2) for name, fn in cases().items()}
    out = HERE / "results" / "patch.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"unit": "microseconds per call", "repeat": args.repeat,
                               "python": sys.version.split()[0], "results": results}, indent=2) + "\n")
    width = max(map(len, results))
    print(f"{'case':<{width}}  us/call")
    for name, us in results.items():
        print(f"{name:<{width}}  {us:8.1f}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
