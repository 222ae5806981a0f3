"""Where a cluster is and how to authenticate: kubeconfig files, in-cluster service accounts and exec
credential plugins, turned into one `ClusterConfig`."""

from kubeloop.config.autodetect import load_config
from kubeloop.config.cluster import ClusterConfig
from kubeloop.config.credentials import Auth, Credentials, StaticAuth, TokenFileAuth
from kubeloop.config.errors import ConfigError, ExecPluginError, ExecPluginTimeout
from kubeloop.config.exec_plugin import ExecAuth
from kubeloop.config.incluster import in_cluster_available, load_in_cluster
from kubeloop.config.kubeconfig import load_kubeconfig, merge_kubeconfigs
from kubeloop.config.tls import make_ssl_context

__all__ = [
    "Auth",
    "ClusterConfig",
    "ConfigError",
    "Credentials",
    "ExecAuth",
    "ExecPluginError",
    "ExecPluginTimeout",
    "StaticAuth",
    "TokenFileAuth",
    "in_cluster_available",
    "load_config",
    "load_in_cluster",
    "load_kubeconfig",
    "make_ssl_context",
    "merge_kubeconfigs",
]
