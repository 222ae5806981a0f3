"""Label and field selectors: grammar, server messages, matching and the subset check."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.meta import (
    FieldRequirement,
    FieldSelector,
    LabelSelector,
    Requirement,
    SelectorError,
    escape_field_value,
)

# The label sets the conformance `selectors` scenario seeds (cm-0 .. cm-6).
SEL_LABELS = [{"tier": "a"}, {"tier": "b"}, {"tier": "c"}, {"tier": "a", "env": "prod"},
              {"tier": "b", "env": "dev"}, {"env": "prod"}, {}]
EXPECTED = Path("/work/shared/conformance/expected.json")


def _recorded_selectors() -> list[tuple[str, object]]:
    if not EXPECTED.exists():
        return []
    steps = json.loads(EXPECTED.read_text())["scenarios"]["selectors"]
    out = []
    for s in steps:
        step = s["step"]
        if step.startswith("labelSelector "):
            out.append((step[len("labelSelector "):], s["body"]["names"]))
        elif step.startswith("invalid labelSelector "):
            out.append((step[len("invalid labelSelector "):], s["status"]["~message"]))
    return out


@pytest.mark.parametrize(("text", "want"), _recorded_selectors() or [("tier=a", ["cm-0", "cm-3"])])
def test_recorded_server_behaviour(text: str, want: object) -> None:
    if isinstance(want, list):
        sel = LabelSelector.parse(text)
        got = [f"cm-{i}" for i, labels in enumerate(SEL_LABELS) if sel.matches(labels)]
        assert got == want
    else:
        with pytest.raises(SelectorError) as e:
            LabelSelector.parse(text)
        assert str(e.value) == want


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("", ""),
        ("  ", ""),
        ("a", "a"),
        ("!a", "!a"),
        ("a==b", "a=b"),
        ("b=1,a=2", "a=2,b=1"),
        ("a in (z, y ,x)", "a in (x,y,z)"),
        ("a notin ( x )", "a notin (x)"),
        ("a in ()", "a in ()"),
        ("a in (,)", "a in ()"),
        ("a in (x,,y)", "a in (,x,y)"),
        ("a=", "a="),
        ("a!=", "a!="),
        ("a>5", "a>5"),
        ("a<10", "a<10"),
        ("example.com/app=web", "example.com/app=web"),
        ("\ta\n=\rb", "a=b"),
        ("in=notin", "in=notin"),
        ("x in (in,notin)", "x in (in,notin)"),
    ],
)
def test_parse_canonical(text: str, canonical: str) -> None:
    sel = LabelSelector.parse(text)
    assert str(sel) == canonical
    assert LabelSelector.parse(str(sel)) == sel


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("a,", "found '', expected: identifier after ','"),
        (",a", "found ',', expected: !, identifier, or 'end of string'"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"),
        ("a=(", "unable to parse requirement: found '(', expected: identifier"),
        ("!", "unable to parse requirement: found '', expected: identifier"),
        ("a>x", "for 'Gt', 'Lt' operators, the value must be an integer"),
        ("_a=b", 'Invalid value: "_a": name part must consist of alphanumeric characters'),
        ("a=-b", 'Invalid value: "-b": a valid label must be an empty string'),
        ("a/b/c=1", "a qualified name must consist of"),
        ("Example.com/a=1", "prefix part a lowercase RFC 1123 subdomain"),
        ("/a=1", "prefix part must be non-empty"),
        ("a/=1", "name part must be non-empty"),
        ("a=" + "x" * 64, "must be no more than 63 characters"),
        ("k" * 64, "name part must be no more than 63 characters"),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as e:
        LabelSelector.parse(text)
    assert message in str(e.value)
    assert isinstance(e.value, ValueError)


def test_matching_semantics() -> None:
    labels = {"a": "1", "b": "x", "n": "12"}
    cases = {
        "a": True, "!a": False, "z": False, "!z": True,
        "a=1": True, "a==1": True, "a!=1": False, "z!=1": True,
        "a in (1,2)": True, "a notin (1,2)": False, "z notin (1)": True, "z in (1)": False,
        "n>11": True, "n>12": False, "n<13": True, "b>1": False, "z<5": False,
        "a=1,b=x": True, "a=1,b=y": False, "z=": False, "a in ()": False,
    }
    for text, want in cases.items():
        assert LabelSelector.parse(text).matches(labels) is want, text
    assert LabelSelector.parse("").matches({}) is True


def test_from_dict() -> None:
    sel = LabelSelector.from_dict({
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["b", "a"]},
            {"key": "legacy", "operator": "DoesNotExist"},
            {"key": "env", "operator": "Exists"},
            {"key": "zone", "operator": "NotIn", "values": ["x"]},
        ],
    })
    assert str(sel) == "app=web,env,!legacy,tier in (a,b),zone notin (x)"
    assert sel == LabelSelector.parse(str(sel))
    assert sel.matches({"app": "web", "tier": "a", "env": "p"})
    assert not sel.matches({"app": "web", "tier": "a", "env": "p", "legacy": "1"})
    assert LabelSelector.from_dict({}).empty
    with pytest.raises(SelectorError, match="is not a valid label selector operator"):
        LabelSelector.from_dict({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})
    with pytest.raises(SelectorError, match="values set can't be empty"):
        LabelSelector.from_dict({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]})
    with pytest.raises(SelectorError, match="values set must be empty"):
        LabelSelector.from_dict({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]})
    with pytest.raises(SelectorError, match="name part"):
        LabelSelector.from_dict({"matchLabels": {"a\n": "b"}})
    with pytest.raises(SelectorError, match="must be strings"):
        LabelSelector.from_dict({"matchLabels": {"replicas": 3}})


def test_requirements_and_equality() -> None:
    sel = LabelSelector.parse("b in (y,x),a")
    assert sel.requirements == (Requirement("a", "exists"), Requirement("b", "in", ("x", "y")))
    assert sel == LabelSelector.parse("a,b in (x,y)")
    assert hash(sel) == hash(LabelSelector.parse("a,b in (x,y)"))
    assert sel != LabelSelector.parse("a")


@pytest.mark.parametrize(
    ("narrow", "broad", "want"),
    [
        ("a=1", "", True),
        ("", "a=1", False),
        ("a=1,b=2", "a=1", True),
        ("a=1", "a", True),
        ("a=1", "a in (1,2)", True),
        ("a in (1,2)", "a=1", False),
        ("a in (1,2)", "a in (1,2,3)", True),
        ("a=1", "a!=2", True),
        ("a=1", "a notin (2,3)", True),
        ("a notin (1,2)", "a!=1", True),
        ("a!=1", "a notin (1,2)", False),
        ("!a", "a!=1", True),
        ("!a", "a", False),
        ("a", "!a", False),
        ("a>5", "a>3", True),
        ("a>3", "a>5", False),
        ("a>5", "a", True),
        ("a<5,a>1", "a!=x", True),
        ("a>5", "a!=3", True),
        ("a>5", "a!=7", False),
        ("a=1,a=2", "zzz=1", True),  # matches nothing
        ("a=7", "a>5", True),
        ("a in (7,9)", "a>5,a<10", True),
        ("a in (7,11)", "a<10", False),
        ("a notin (1)", "a in (2)", False),
    ],
)
def test_implies_table(narrow: str, broad: str, want: bool) -> None:
    assert LabelSelector.parse(narrow).implies(LabelSelector.parse(broad)) is want
    assert LabelSelector.parse(narrow).is_subset_of(broad) is want


# ------------------------------------------------------------------ property tests

KEYS = ["a", "b", "example.com/c"]
VALUES = ["", "1", "2", "10", "x"]
label_sets = st.dictionaries(st.sampled_from(KEYS), st.sampled_from([*VALUES, "-3", "+4", "01"]), max_size=3)


@st.composite
def requirements(draw: st.DrawFn) -> Requirement:
    key = draw(st.sampled_from(KEYS))
    op = draw(st.sampled_from(["=", "!=", "in", "notin", "exists", "!", "gt", "lt"]))
    if op in ("exists", "!"):
        return Requirement.new(key, op, ())
    if op in ("gt", "lt"):
        return Requirement.new(key, op, [draw(st.sampled_from(["1", "2", "10"]))])
    if op in ("=", "!="):
        return Requirement.new(key, op, [draw(st.sampled_from(VALUES))])
    return Requirement.new(key, op, draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=3)))


selectors = st.lists(requirements(), max_size=4).map(LabelSelector)


def brute_matches(sel: LabelSelector, labels: dict[str, str]) -> bool:
    """An independent evaluator written straight from the documented semantics."""
    for r in sel.requirements:
        has = r.key in labels
        v = labels.get(r.key)
        if r.operator in ("=", "in"):
            ok = has and v in r.values
        elif r.operator in ("!=", "notin"):
            ok = (not has) or v not in r.values
        elif r.operator == "exists":
            ok = has
        elif r.operator == "!":
            ok = not has
        else:
            try:
                iv = int(v) if v is not None and v.lstrip("+-").isdigit() else None
            except ValueError:
                iv = None
            if iv is None:
                ok = False
            else:
                ok = iv > int(r.values[0]) if r.operator == "gt" else iv < int(r.values[0])
        if not ok:
            return False
    return True


@settings(max_examples=300, deadline=None)
@given(selectors, label_sets)
def test_property_roundtrip_and_matches(sel: LabelSelector, labels: dict[str, str]) -> None:
    assert LabelSelector.parse(str(sel)) == sel
    assert sel.matches(labels) is brute_matches(sel, labels)


ALL_LABEL_SETS = [
    {k: v for k, v in zip(KEYS, combo, strict=True) if v is not None}
    for combo in itertools.product([None, *VALUES, "3", "7", "11"], repeat=len(KEYS))
]


@settings(max_examples=400, deadline=None)
@given(selectors, selectors, st.lists(label_sets, max_size=30))
def test_property_implies_never_false_positive(
    narrow: LabelSelector, broad: LabelSelector, extra: list[dict[str, str]]
) -> None:
    if narrow.implies(broad):
        for labels in [*extra, *ALL_LABEL_SETS]:
            if narrow.matches(labels):
                assert broad.matches(labels), (str(narrow), str(broad), labels)
    assert narrow.implies(narrow)
    assert LabelSelector(narrow.requirements + broad.requirements).implies(broad)


# ------------------------------------------------------------------ field selectors


def test_field_selector_parse_and_match() -> None:
    sel = FieldSelector.parse("metadata.name=cm-1,metadata.namespace==ns")
    assert sel.requirements == (
        FieldRequirement("metadata.name", "=", "cm-1"),
        FieldRequirement("metadata.namespace", "=", "ns"),
    )
    assert str(sel) == "metadata.name=cm-1,metadata.namespace=ns"
    assert sel.matches({"metadata.name": "cm-1", "metadata.namespace": "ns"})
    assert not sel.matches({"metadata.name": "cm-2", "metadata.namespace": "ns"})
    assert FieldSelector.parse("spec.nodeName=").matches({})
    assert FieldSelector.parse("spec.nodeName!=").matches({"spec.nodeName": "n1"})
    assert not FieldSelector.parse("spec.nodeName!=").matches({})
    assert FieldSelector.parse("").empty and FieldSelector.parse(",,").empty
    assert sel.equals_value("metadata.namespace") == "ns"
    assert sel.fields == {"metadata.name", "metadata.namespace"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc", "invalid selector: 'abc'; can't understand 'abc'"),
        ("a=b=c", "invalid field selector: unescaped character in value: 61"),
        ("a=b\\q", "invalid field selector: invalid escape sequence: \\q"),
        ("a=b\\", "invalid field selector: invalid escape sequence: \\"),
    ],
)
def test_field_selector_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as e:
        FieldSelector.parse(text)
    assert str(e.value) == message


def test_field_selector_escaping() -> None:
    sel = FieldSelector.parse(r"a=x\,y\=z\\w,b!=q")
    assert sel.requirements == (FieldRequirement("a", "=", "x,y=z\\w"), FieldRequirement("b", "!=", "q"))
    assert FieldSelector.parse(str(sel)) == sel
    assert escape_field_value("a,b=c\\") == r"a\,b\=c\\"


field_values = st.text(alphabet="ab,=\\ .", max_size=5)
field_reqs = st.builds(FieldRequirement, st.sampled_from(["f", "g"]), st.sampled_from(["=", "!="]), field_values)
field_selectors = st.lists(field_reqs, max_size=3).map(FieldSelector)
field_sets = st.dictionaries(st.sampled_from(["f", "g"]), field_values, max_size=2)


@settings(max_examples=300, deadline=None)
@given(field_selectors, field_selectors, st.lists(field_sets, max_size=20))
def test_field_property(narrow: FieldSelector, broad: FieldSelector, sets: list[dict[str, str]]) -> None:
    assert FieldSelector.parse(str(narrow)) == narrow
    candidates = list(sets)
    for r in [*narrow.requirements, *broad.requirements]:
        candidates.append({r.field: r.value})
        candidates.append({r.field: r.value + "!"})
    for fs in candidates:
        want = all(fs.get(r.field, "") == r.value if r.operator == "=" else fs.get(r.field, "") != r.value
                   for r in narrow.requirements)
        assert narrow.matches(fs) is want
    if narrow.implies(broad):
        for fs in candidates:
            if narrow.matches(fs):
                assert broad.matches(fs)
    assert narrow.implies(narrow)


def test_field_implies_table() -> None:
    assert FieldSelector.parse("metadata.namespace=a,metadata.name=x").implies("metadata.namespace=a")
    assert not FieldSelector.parse("metadata.namespace=a").implies("metadata.namespace=b")
    assert FieldSelector.parse("f=a").implies("f!=b")
    assert not FieldSelector.parse("f=a").implies("f!=a")
    assert FieldSelector.parse("f!=a,f!=b").implies("f!=a")
    assert not FieldSelector.parse("f!=a").implies("f=b")
    assert FieldSelector.parse("f=a,f=b").implies("g=z")
    assert FieldSelector.parse("").implies("") and not FieldSelector.parse("").implies("f=a")


def test_field_selector_supported_fields() -> None:
    FieldSelector.parse("metadata.name=a").require_fields(["metadata.name", "metadata.namespace"])
    with pytest.raises(SelectorError) as e:
        FieldSelector.parse("data.i=1").require_fields(["metadata.name", "metadata.namespace"])
    assert str(e.value) == '"data.i" is not a known field selector: only "metadata.name", "metadata.namespace"'
    with pytest.raises(SelectorError, match=r"field label not supported: spec\.foo"):
        FieldSelector.parse("spec.foo=1").require_fields(["metadata.name", "metadata.namespace", "spec.nodeName"])


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=" \t=!(),<>ainotx1/.-_Z\x00é", max_size=24))
def test_fuzz_label_parser_never_crashes(text: str) -> None:
    try:
        sel = LabelSelector.parse(text)
    except SelectorError as e:
        assert str(e)
        return
    assert LabelSelector.parse(str(sel)) == sel
    sel.matches({"a": "1", "x": "a"})


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab.=!,\\ x", max_size=16))
def test_fuzz_field_parser_never_crashes(text: str) -> None:
    try:
        sel = FieldSelector.parse(text)
    except SelectorError:
        return
    assert FieldSelector.parse(str(sel)) == sel


def test_coercion_and_conjunction_are_shared_by_both_kinds() -> None:
    from kubeloop.meta import as_field_selector, as_label_selector

    assert as_label_selector(None).empty and as_field_selector(None).empty
    assert as_label_selector({"b": "2", "a": "1"}) == as_label_selector("a=1,b=2") == LabelSelector.parse("b=2,a=1")
    assert str(as_field_selector({"metadata.name": "a,b"})) == r"metadata.name=a\,b"
    sel = LabelSelector.parse("a=1")
    assert as_label_selector(sel) is sel
    assert str(sel & LabelSelector.parse("b in (x,y)")) == "a=1,b in (x,y)"
    assert (sel & LabelSelector()) is sel and (LabelSelector() & sel) is sel
    assert LabelSelector() != FieldSelector() and repr(FieldSelector.parse("x=1")) == "FieldSelector('x=1')"
    with pytest.raises(SelectorError):
        as_label_selector({"bad key!": "v"})
