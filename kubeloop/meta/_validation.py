"""Names and label rules of Kubernetes (apimachinery `util/validation`), with the real messages.

One copy for the whole package: selectors validate label keys and values with it, and the
emulator validates objects with it, both answering exactly what kube-apiserver would answer.
Each `is_*` returns the list of reasons the value is invalid (empty when valid).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_VALUE_FMT = "(" + QUALIFIED_NAME_FMT + ")?"
CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
ENV_VAR_NAME_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*"

_DNS1123_LABEL = re.compile(DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN = re.compile(DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL = re.compile(DNS1035_LABEL_FMT)
_QUALIFIED_NAME = re.compile(QUALIFIED_NAME_FMT)
_LABEL_VALUE = re.compile(LABEL_VALUE_FMT)
_CONFIG_KEY = re.compile(CONFIG_KEY_FMT)
_ENV_VAR_NAME = re.compile(ENV_VAR_NAME_FMT)

DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    f"validation is '{DNS1123_SUBDOMAIN_FMT}')"
)
DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    f"validation is '{DNS1123_LABEL_FMT}')"
)
DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    f"regex used for validation is '{DNS1035_LABEL_FMT}')"
)
QUALIFIED_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    f"validation is '{QUALIFIED_NAME_FMT}')"
)
QUALIFIED_NAME_SLASH_MSG = (
    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
    f"for validation is '{QUALIFIED_NAME_FMT}') with an optional DNS subdomain prefix and '/' "
    "(e.g. 'example.com/MyName')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    f"'12345', regex used for validation is '{LABEL_VALUE_FMT}')"
)
CONFIG_KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  "
    f"or 'KEY_NAME',  or 'key-name', regex used for validation is '{CONFIG_KEY_FMT}')"
)
ENV_VAR_NAME_MSG = (
    "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', "
    "and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used "
    f"for validation is '{ENV_VAR_NAME_FMT}')"
)


def _format_errors(value: str, max_len: int, pattern: re.Pattern[str], message: str) -> list[str]:
    """The two checks most rules are made of, in the server's order: length, then format."""
    errs = [f"must be no more than {max_len} characters"] if len(value) > max_len else []
    if not pattern.fullmatch(value):
        errs.append(message)
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """`IsDNS1123Subdomain`: most object names (at most 253 characters)."""
    return _format_errors(value, 253, _DNS1123_SUBDOMAIN, DNS1123_SUBDOMAIN_MSG)


def is_dns1123_label(value: str) -> list[str]:
    """`IsDNS1123Label`: namespace names and the like (at most 63 characters)."""
    return _format_errors(value, 63, _DNS1123_LABEL, DNS1123_LABEL_MSG)


def is_dns1035_label(value: str) -> list[str]:
    """`IsDNS1035Label`: Service names (a letter first, at most 63 characters)."""
    return _format_errors(value, 63, _DNS1035_LABEL, DNS1035_LABEL_MSG)


def is_qualified_name(value: str) -> list[str]:
    """`IsQualifiedName`: `[prefix/]name` with a DNS-subdomain prefix."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty", *_name_part(name)]
        errs = ["prefix part " + m for m in is_dns1123_subdomain(prefix)]
        return errs + _name_part(name)
    else:
        return [QUALIFIED_NAME_SLASH_MSG]
    return _name_part(name)


def _name_part(name: str) -> list[str]:
    errs: list[str] = []
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _QUALIFIED_NAME.fullmatch(name):
        errs.append(QUALIFIED_NAME_MSG)
    return errs


def is_label_value(value: str) -> list[str]:
    """`IsValidLabelValue`: empty, or a qualified name part (at most 63 characters)."""
    return _format_errors(value, 63, _LABEL_VALUE, LABEL_VALUE_MSG)


def config_key_ok(value: str) -> bool:
    """Fast check of the common case (a valid key); `is_config_key` explains a bad one."""
    return len(value) <= 253 and _CONFIG_KEY.fullmatch(value) is not None and not value.startswith("..") \
        and value != "."


_CONFIG_KEYS = re.compile("(?:" + CONFIG_KEY_FMT + "\n)*")


def config_keys_ok(keys: Iterable[str]) -> bool:
    """Fast check that every key is a valid config key (one regex over all of them)."""
    keys = list(keys)
    if not keys:
        return True
    joined = "\n" + "\n".join(keys) + "\n"
    return (joined.count("\n") == len(keys) + 1 and _CONFIG_KEYS.fullmatch(joined, 1) is not None and "\n..\n" not in joined and "\n.\n" not in joined
            and "\n.." not in joined and max(map(len, joined.split("\n"))) <= 253)


def _ch_dir_prefix(value: str) -> list[str]:
    """`hasChDirPrefix`: what a name that becomes a file or variable name may not be."""
    if value == ".":
        return ["must not be '.'"]
    if value == "..":
        return ["must not be '..'"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []


def is_config_key(value: str) -> list[str]:
    """`IsConfigMapKey`: keys of ConfigMap and Secret data."""
    return _format_errors(value, 253, _CONFIG_KEY, CONFIG_KEY_MSG) + _ch_dir_prefix(value)


def is_env_var_name(value: str) -> list[str]:
    """`IsEnvVarName`: a container's environment variable names."""
    errs = [] if _ENV_VAR_NAME.fullmatch(value) else [ENV_VAR_NAME_MSG]
    return errs + _ch_dir_prefix(value)
