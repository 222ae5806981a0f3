"""Where a cluster is and how to authenticate: kubeconfig files, in-cluster service accounts and exec
credential plugins, turned into one `ClusterConfig`."""

from kubeloop.config._autodetect import load_config
from kubeloop.config._cluster import ClusterConfig
from kubeloop.config._credentials import Auth, Credentials, StaticAuth, TokenFileAuth
from kubeloop.config._errors import ConfigError, ExecPluginError, ExecPluginTimeout
from kubeloop.config._exec_plugin import ExecAuth
from kubeloop.config._incluster import in_cluster_available, load_in_cluster
from kubeloop.config._kubeconfig import load_kubeconfig, merge_kubeconfigs
from kubeloop.config._tls import make_ssl_context

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
