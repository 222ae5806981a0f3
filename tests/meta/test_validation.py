"""Kubernetes name and label rules (`kubeloop.meta`), shared by selectors and the emulator."""

from __future__ import annotations

import pytest

from kubeloop import meta as kv
from kubeloop.meta import LabelSelector, SelectorError


def test_qualified_name_messages() -> None:
    assert kv.is_qualified_name("example.com/ok") == []
    assert kv.is_qualified_name("bad key") == [kv.QUALIFIED_NAME_MSG]
    assert kv.is_qualified_name("") == ["name part must be non-empty", kv.QUALIFIED_NAME_MSG]
    assert kv.is_qualified_name("/x") == ["prefix part must be non-empty"]
    assert kv.is_qualified_name("a/b/c") == [kv.QUALIFIED_NAME_SLASH_MSG]
    assert kv.is_qualified_name("Bad_/x")[0].startswith("prefix part a lowercase RFC 1123 subdomain")
    assert kv.is_qualified_name("x" * 64) == ["name part must be no more than 63 characters"]


def test_label_values_and_subdomains() -> None:
    assert kv.is_label_value("") == []
    assert kv.is_label_value("bad value!") == [kv.LABEL_VALUE_MSG]
    assert kv.is_dns1123_subdomain("a" * 254) == ["must be no more than 253 characters"]
    assert kv.is_dns1123_subdomain("Bad_Name") == [kv.DNS1123_SUBDOMAIN_MSG]
    assert kv.is_dns1123_label("a.b") == [kv.DNS1123_LABEL_MSG]
    assert kv.is_dns1035_label("1abc") == [kv.DNS1035_LABEL_MSG]
    assert kv.is_config_key("bad key!") == [kv.CONFIG_KEY_MSG]
    assert kv.is_config_key("..x") == ["must not start with '..'"]
    assert kv.is_dns1123_subdomain("abc\n") == [kv.DNS1123_SUBDOMAIN_MSG]  # Go's `$` is not Python's


def test_messages_are_gos_regex_error_text() -> None:
    """`validation.RegexError` joins its examples with `"', " + " or "`: two spaces before "or"."""
    assert "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is" in kv.QUALIFIED_NAME_MSG
    with pytest.raises(SelectorError) as exc:
        LabelSelector.parse("a/b/c=1")
    assert str(exc.value) == 'unable to parse requirement: <nil>: Invalid value: "a/b/c": ' + kv.QUALIFIED_NAME_SLASH_MSG
