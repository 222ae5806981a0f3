"""Go's encoding/json syntax errors (`gojson.py`): the expected texts are what Go 1.19's
`json.Unmarshal` printed for each input."""

from __future__ import annotations

import pytest

from kubeloop.testing.apiserver.gojson import syntax_error

GO_ANSWERS = [
    ("not json", "invalid character 'o' in literal null (expecting 'u')"),
    ("{\"a\":1}", None),
    ("{\"a\" 1}", "invalid character '1' after object key"),
    ("{\"a\":1 \"b\"}", "invalid character '\"' after object key:value pair"),
    ("[1 2]", "invalid character '2' after array element"),
    ("[1,]", "invalid character ']' looking for beginning of value"),
    ("{,}", "invalid character ',' looking for beginning of object key string"),
    ("{\"a\":tru}", "invalid character '}' in literal true (expecting 'e')"),
    ("nul", "invalid character ' ' in literal null (expecting 'l')"),
    ("-x", "invalid character 'x' in numeric literal"),
    ("1.x", "invalid character 'x' after decimal point in numeric literal"),
    ("1e+", "invalid character ' ' in exponent of numeric literal"),
    ("\"ab\\x\"", "invalid character 'x' in string escape code"),
    ("\"\\u12g4\"", "invalid character 'g' in \\u hexadecimal character escape"),
    ("{\"a\":1}}", "invalid character '}' after top-level value"),
    ("01", "invalid character '1' after top-level value"),
    ("[1,2]x", "invalid character 'x' after top-level value"),
    ("  ", "unexpected end of JSON input"),
    ("{\"a\":[1,{\"b\":null}],\"c\":\"d\"}", None),
    ("\"abc", "unexpected end of JSON input"),
    ("1.5e3", None),
    ("-0.1", None),
    ("{\"a\":falsy}", "invalid character 'y' in literal false (expecting 'e')"),
    ("tab\tin", "invalid character 'a' in literal true (expecting 'r')"),
]


@pytest.mark.parametrize(("text", "go"), GO_ANSWERS)
def test_syntax_errors_are_go_s(text: str, go: str | None) -> None:
    assert syntax_error(text.encode()) == go
