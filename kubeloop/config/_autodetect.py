"""Pick the configuration source the way controller-runtime's GetConfig does."""

from __future__ import annotations

import os

from kubeloop.config._cluster import ClusterConfig
from kubeloop.config._incluster import in_cluster_available, load_in_cluster
from kubeloop.config._kubeconfig import load_kubeconfig


def load_config(
    path: str | os.PathLike[str] | None = None,
    *,
    context: str | None = None,
    namespace: str | None = None,
) -> ClusterConfig:
    """An explicit path, else KUBECONFIG, else in-cluster (when running in a pod), else ~/.kube/config."""
    if path is None and not os.environ.get("KUBECONFIG") and context is None and in_cluster_available():
        cfg = load_in_cluster()
        if namespace:
            cfg.namespace = namespace
        return cfg
    return load_kubeconfig(path, context=context, namespace=namespace)
