"""Kubernetes object vocabulary: selectors, name rules, object accessors, resourceVersions, event
types, JSON values compared as the API server compares them (``semantically_equal``); the timing
primitives every layer shares: `Clock`, `Backoff`, `TokenBucket`; and `run_event_loop`, which runs
a program on the fastest event loop installed.

The leaf of the package: it imports nothing of kubeloop, so every layer (client, watch, cache,
queue, controller, manager and the emulator) shares one definition of each concept.
Internal modules are private (``_name.py``); the public names are exported here.
"""

from kubeloop.meta._backoff import Backoff
from kubeloop.meta._clock import REAL_CLOCK, Clock, RealClock, Timer, check_clock
from kubeloop.meta._cluster import DEFAULT_CLUSTER
from kubeloop.meta._coerce import FieldSelectorLike, LabelSelectorLike, as_field_selector, as_label_selector
from kubeloop.meta._errors import SelectorError
from kubeloop.meta._event_loop import EVENT_LOOP_ENV, event_loop_factory, run_event_loop
from kubeloop.meta._event_types import (
    ADDED,
    BOOKMARK,
    DELETED,
    ERROR,
    MODIFIED,
    RESYNC,
    WATCH_EVENT_TYPES,
    EventType,
)
from kubeloop.meta._fields import FieldRequirement, FieldSelector, escape_field_value
from kubeloop.meta._labels import LabelSelector
from kubeloop.meta._object import (
    annotations_of,
    labels_of,
    metadata_of,
    name_of,
    namespace_of,
    owner_references_of,
    resource_version_of,
    uid_of,
    without_nulls,
)
from kubeloop.meta._refs import (
    AlreadyOwnedError,
    IncompleteObjectError,
    InvalidOwnerError,
    controller_of,
    is_owned_by,
    object_reference,
    owner_reference,
    set_controller_reference,
    set_owner_reference,
)
from kubeloop.meta._requirement import Requirement
from kubeloop.meta._rv import rv_at_least, rv_int, rv_newer
from kubeloop.meta._semantic import go_json_numbers, semantically_equal
from kubeloop.meta._time import TimeFormatError, format_micro_time, format_time, now, parse_time
from kubeloop.meta._token_bucket import TokenBucket
from kubeloop.meta._validation import (
    CONFIG_KEY_MSG,
    DNS1035_LABEL_MSG,
    DNS1123_LABEL_MSG,
    DNS1123_SUBDOMAIN_MSG,
    LABEL_VALUE_MSG,
    QUALIFIED_NAME_MSG,
    QUALIFIED_NAME_SLASH_MSG,
    config_key_ok,
    config_keys_ok,
    is_config_key,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_env_var_name,
    is_label_value,
    is_qualified_name,
)

__all__ = [
    "ADDED",
    "BOOKMARK",
    "CONFIG_KEY_MSG",
    "DEFAULT_CLUSTER",
    "DELETED",
    "DNS1035_LABEL_MSG",
    "DNS1123_LABEL_MSG",
    "DNS1123_SUBDOMAIN_MSG",
    "ERROR",
    "EVENT_LOOP_ENV",
    "LABEL_VALUE_MSG",
    "MODIFIED",
    "QUALIFIED_NAME_MSG",
    "QUALIFIED_NAME_SLASH_MSG",
    "REAL_CLOCK",
    "RESYNC",
    "WATCH_EVENT_TYPES",
    "AlreadyOwnedError",
    "Backoff",
    "Clock",
    "EventType",
    "FieldRequirement",
    "FieldSelector",
    "FieldSelectorLike",
    "IncompleteObjectError",
    "InvalidOwnerError",
    "LabelSelector",
    "LabelSelectorLike",
    "RealClock",
    "Requirement",
    "SelectorError",
    "TimeFormatError",
    "Timer",
    "TokenBucket",
    "annotations_of",
    "as_field_selector",
    "as_label_selector",
    "check_clock",
    "config_key_ok",
    "config_keys_ok",
    "controller_of",
    "escape_field_value",
    "event_loop_factory",
    "format_micro_time",
    "format_time",
    "go_json_numbers",
    "is_config_key",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_env_var_name",
    "is_label_value",
    "is_owned_by",
    "is_qualified_name",
    "labels_of",
    "metadata_of",
    "name_of",
    "namespace_of",
    "now",
    "object_reference",
    "owner_reference",
    "owner_references_of",
    "parse_time",
    "resource_version_of",
    "run_event_loop",
    "rv_at_least",
    "rv_int",
    "rv_newer",
    "semantically_equal",
    "set_controller_reference",
    "set_owner_reference",
    "uid_of",
    "without_nulls",
]
