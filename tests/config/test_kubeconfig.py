"""The kubeconfig loader on real files: every auth method, merge rules, and one-line errors."""

from __future__ import annotations

import base64
import os
import ssl
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubeloop.config import (
    ConfigError,
    ExecAuth,
    StaticAuth,
    TokenFileAuth,
    load_config,
    load_kubeconfig,
    make_ssl_context,
)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def kubeconfig(clusters: dict[str, dict[str, Any]], users: dict[str, dict[str, Any]],
               contexts: dict[str, dict[str, Any]], current: str | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": n, "cluster": c} for n, c in clusters.items()],
        "users": [{"name": n, "user": u} for n, u in users.items()],
        "contexts": [{"name": n, "context": c} for n, c in contexts.items()],
    }
    if current is not None:
        doc["current-context"] = current
    return doc


def write(path: Path, doc: dict[str, Any] | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    return path


def simple(server: str = "https://k.example:6443", user: dict[str, Any] | None = None,
           cluster_extra: dict[str, Any] | None = None, namespace: str | None = None) -> dict[str, Any]:
    ctx: dict[str, Any] = {"cluster": "c", "user": "u"}
    if namespace:
        ctx["namespace"] = namespace
    return kubeconfig({"c": {"server": server, **(cluster_extra or {})}}, {"u": user or {"token": "t0"}},
                      {"ctx": ctx}, current="ctx")


async def test_token_and_namespace_default(tmp_path: Path) -> None:
    cfg = load_kubeconfig(write(tmp_path / "kc", simple()))
    assert cfg.server == "https://k.example:6443"
    assert cfg.namespace == "default"
    assert cfg.context == "ctx"
    creds = await cfg.auth.credentials()
    assert creds.token == "t0"
    assert creds.authorization() == "Bearer t0"


def test_context_namespace_and_override(tmp_path: Path) -> None:
    path = write(tmp_path / "kc", simple(namespace="team-a"))
    assert load_kubeconfig(path).namespace == "team-a"
    assert load_kubeconfig(path, namespace="other").namespace == "other"


def test_context_selection(tmp_path: Path) -> None:
    doc = kubeconfig(
        {"one": {"server": "https://one:6443"}, "two": {"server": "https://two:6443"}},
        {"u": {"token": "x"}},
        {"a": {"cluster": "one", "user": "u"}, "b": {"cluster": "two", "user": "u", "namespace": "nb"}},
        current="a",
    )
    path = write(tmp_path / "kc", doc)
    assert load_kubeconfig(path).server == "https://one:6443"
    cfg = load_kubeconfig(path, context="b")
    assert (cfg.server, cfg.namespace, cfg.context) == ("https://two:6443", "nb", "b")


async def test_token_file_relative_to_kubeconfig(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "tok").write_text("from-file\n")
    cfg = load_kubeconfig(write(tmp_path / "kc", simple(user={"tokenFile": "secrets/tok"})))
    assert isinstance(cfg.auth, TokenFileAuth)
    assert (await cfg.auth.credentials()).token == "from-file"
    (tmp_path / "secrets" / "tok").write_text("rotated")
    cfg.auth.invalidate()  # what the client does after a 401
    assert (await cfg.auth.credentials()).token == "rotated"


async def test_basic_auth(tmp_path: Path) -> None:
    cfg = load_kubeconfig(write(tmp_path / "kc", simple(user={"username": "admin", "password": "pw"})))
    creds = await cfg.auth.credentials()
    assert creds.authorization() == "Basic " + b64(b"admin:pw")


async def test_client_cert_and_ca_data(tmp_path: Path, pki: Any) -> None:
    user = {"client-certificate-data": b64(pki.client_cert_pem), "client-key-data": b64(pki.client_key_pem)}
    cfg = load_kubeconfig(write(tmp_path / "kc", simple(
        user=user, cluster_extra={"certificate-authority-data": b64(pki.ca_pem), "tls-server-name": "kube.internal",
                                  "proxy-url": "http://proxy.local:3128"})))
    creds = await cfg.auth.credentials()
    assert creds.client_cert == pki.client_cert_pem and creds.client_key == pki.client_key_pem
    assert creds.authorization() is None
    assert cfg.ca_data == pki.ca_pem
    assert cfg.tls_server_name == "kube.internal"
    assert cfg.proxy_url == "http://proxy.local:3128"
    ctx = make_ssl_context(ca_data=cfg.ca_data, insecure=False, client_cert=creds.client_cert,
                           client_key=creds.client_key)
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    # the kubeconfig's authority alone, as client-go trusts it (no system roots: ~20 ms per start)
    assert [c.get("subject") for c in ctx.get_ca_certs()] == [((("commonName", "test-ca"),),)]


async def test_client_cert_and_ca_files_relative(tmp_path: Path, pki: Any) -> None:
    pem = tmp_path / "pem"
    pem.mkdir()
    (pem / "ca.crt").write_bytes(pki.ca_pem)
    (pem / "c.crt").write_bytes(pki.client_cert_pem)
    (pem / "c.key").write_bytes(pki.client_key_pem)
    cfg = load_kubeconfig(write(tmp_path / "kc", simple(
        user={"client-certificate": "pem/c.crt", "client-key": "pem/c.key", "token": "both"},
        cluster_extra={"certificate-authority": "pem/ca.crt"})))
    creds = await cfg.auth.credentials()
    assert creds.client_cert == pki.client_cert_pem and creds.token == "both"
    assert cfg.ca_data == pki.ca_pem


def test_insecure_skip_tls_verify(tmp_path: Path) -> None:
    cfg = load_kubeconfig(write(tmp_path / "kc", simple(cluster_extra={"insecure-skip-tls-verify": True})))
    assert cfg.insecure_skip_tls_verify
    ctx = make_ssl_context(ca_data=None, insecure=True)
    assert ctx.verify_mode == ssl.CERT_NONE and not ctx.check_hostname


def test_exec_user_builds_exec_auth(tmp_path: Path) -> None:
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "true", "interactiveMode": "Never"}}
    cfg = load_kubeconfig(write(tmp_path / "kc", simple(user=user)))
    assert isinstance(cfg.auth, ExecAuth)


def test_no_user_is_anonymous(tmp_path: Path) -> None:
    doc = kubeconfig({"c": {"server": "http://127.0.0.1:1"}}, {}, {"x": {"cluster": "c"}}, current="x")
    cfg = load_kubeconfig(write(tmp_path / "kc", doc))
    assert isinstance(cfg.auth, StaticAuth)


# -- KUBECONFIG with several files --------------------------------------------------------------

async def test_kubeconfig_env_merge_first_wins(tmp_path: Path, no_kubeconfig_env: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    first = write(tmp_path / "a" / "config", kubeconfig(
        {"shared": {"server": "https://first:1"}}, {"u": {"token": "first-token"}},
        {"shared-ctx": {"cluster": "shared", "user": "u"}}, current="shared-ctx"))
    second = write(tmp_path / "b" / "config", kubeconfig(
        {"shared": {"server": "https://second:2"}, "only2": {"server": "https://only2:3"}},
        {"u": {"token": "second-token"}, "u2": {"token": "t2"}},
        {"shared-ctx": {"cluster": "only2", "user": "u2"}, "ctx2": {"cluster": "only2", "user": "u2"}},
        current="ctx2"))
    missing = tmp_path / "missing" / "config"
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(missing), str(first), "", str(second)]))
    cfg = load_kubeconfig()
    # current-context from the first file that sets one; names defined in both come from the first
    assert cfg.context == "shared-ctx"
    assert cfg.server == "https://first:1"
    assert (await cfg.auth.credentials()).token == "first-token"
    # names only the second file defines are still available
    cfg2 = load_kubeconfig(context="ctx2")
    assert cfg2.server == "https://only2:3"
    assert (await cfg2.auth.credentials()).token == "t2"
    assert str(first) in cfg.source and str(second) in cfg.source


def test_home_kubeconfig_default(no_kubeconfig_env: Path) -> None:
    write(no_kubeconfig_env / ".kube" / "config", simple(server="https://home:6443"))
    assert load_config().server == "https://home:6443"


# -- errors: one line, naming the file ----------------------------------------------------------

def one_line(exc: pytest.ExceptionInfo[ConfigError]) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


def test_missing_explicit_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        load_kubeconfig(tmp_path / "nope")
    assert one_line(exc) == f"{tmp_path / 'nope'}: kubeconfig file does not exist"


def test_missing_default_file(no_kubeconfig_env: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        load_config()
    assert str(no_kubeconfig_env / ".kube" / "config") in one_line(exc)


def test_kubeconfig_env_all_missing(tmp_path: Path, no_kubeconfig_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "x"))
    with pytest.raises(ConfigError) as exc:
        load_kubeconfig()
    assert "none of the files in KUBECONFIG exist" in one_line(exc)


def test_invalid_yaml(tmp_path: Path) -> None:
    path = write(tmp_path / "kc", "clusters:\n  - name: a\n   bad: [\n")
    with pytest.raises(ConfigError) as exc:
        load_kubeconfig(path)
    text = one_line(exc)
    assert text.startswith(f"{path}: invalid YAML at line ")


def test_not_a_mapping(tmp_path: Path) -> None:
    path = write(tmp_path / "kc", "- just\n- a list\n")
    with pytest.raises(ConfigError) as exc:
        load_kubeconfig(path)
    assert one_line(exc) == f"{path}: not a kubeconfig (top level is a list, not a mapping)"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("current-context"), "no current-context is set"),
        (lambda d: d.update({"current-context": "zzz"}), "context 'zzz' not found (available: ctx)"),
        (lambda d: d["contexts"][0]["context"].update(user="ghost"), "user 'ghost' of context 'ctx' not found"),
        (lambda d: d["contexts"][0]["context"].update(cluster="ghost"), "cluster 'ghost' of context 'ctx' not found"),
        (lambda d: d["clusters"][0]["cluster"].pop("server"), "cluster 'c' has no server"),
        (lambda d: d["clusters"][0]["cluster"].update(server="k.example"), "is not an http(s) URL"),
        (lambda d: d["clusters"][0]["cluster"].update({"certificate-authority-data": "!!notbase64"}),
         "certificate-authority-data of cluster 'c' is not valid base64"),
        (lambda d: d["clusters"][0]["cluster"].update({"certificate-authority": "/does/not/exist"}),
         "cannot read certificate-authority '/does/not/exist' of cluster 'c'"),
        (lambda d: d["users"][0]["user"].update({"client-certificate-data": b64(b"x")}),
         "client certificate without a key"),
        (lambda d: d["users"][0].update(user={"tokenFile": "/does/not/exist"}), "cannot read token file"),
        (lambda d: d["users"][0].update(user={"auth-provider": {"name": "oidc"}}), "auth-provider 'oidc'"),
        (lambda d: d["clusters"][0]["cluster"].update({"proxy-url": "socks5://p:1080"}),
         "only http(s) proxies are supported"),
    ],
)
def test_broken_kubeconfig_errors(tmp_path: Path, mutate: Any, message: str) -> None:
    doc = simple()
    mutate(doc)
    path = write(tmp_path / "kc", doc)
    with pytest.raises(ConfigError) as exc:
        load_kubeconfig(path)
    text = one_line(exc)
    assert message in text
    assert str(path) in text or "/does/not/exist" in text


def test_invalid_client_key_is_config_error(pki: Any) -> None:
    with pytest.raises(ConfigError) as exc:
        make_ssl_context(ca_data=None, insecure=False, client_cert=pki.client_cert_pem, client_key=b"garbage")
    assert "invalid client certificate or key" in one_line(exc)


def test_client_key_temp_files_are_removed(pki: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    make_ssl_context(ca_data=pki.ca_pem, insecure=False, client_cert=pki.client_cert_pem,
                     client_key=pki.client_key_pem)
    assert list(tmp_path.iterdir()) == []


async def test_secrets_not_in_repr(tmp_path: Path, pki: Any) -> None:
    user = {"token": "very-secret", "client-certificate-data": b64(pki.client_cert_pem),
            "client-key-data": b64(pki.client_key_pem)}
    cfg = load_kubeconfig(write(tmp_path / "kc", simple(user=user)))
    creds = await cfg.auth.credentials()
    text = repr(cfg) + repr(creds)
    assert "very-secret" not in text and "PRIVATE KEY" not in text


def test_base64_ca_split_over_several_lines_is_accepted(tmp_path: Path, pki: Any) -> None:
    """Issue 11 item 14: a wrapped base64 block (as `openssl base64` writes it) works, as in client-go."""
    encoded = b64(pki.ca_pem)
    wrapped = "\n".join(encoded[i:i + 64] for i in range(0, len(encoded), 64)) + "\n"
    cfg = load_kubeconfig(write(tmp_path / "kc", simple(cluster_extra={"certificate-authority-data": wrapped})))
    assert cfg.ca_data == pki.ca_pem
    with pytest.raises(ConfigError, match="not valid base64"):  # still strict about the alphabet
        load_kubeconfig(write(tmp_path / "kc2", simple(cluster_extra={"certificate-authority-data": "no*base64"})))
