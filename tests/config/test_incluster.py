"""In-cluster config from a fake service-account directory and environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubeloop.config import ConfigError, TokenFileAuth, load_in_cluster


@pytest.fixture
def sa_dir(tmp_path: Path, pki: Any) -> Path:
    d = tmp_path / "sa"
    d.mkdir()
    (d / "token").write_text("sa-token-1")
    (d / "ca.crt").write_bytes(pki.ca_pem)
    (d / "namespace").write_text("controllers\n")
    return d


ENV = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}


async def test_in_cluster(sa_dir: Path, pki: Any) -> None:
    cfg = load_in_cluster(service_account_dir=sa_dir, env=ENV)
    assert cfg.server == "https://10.0.0.1:443"
    assert cfg.namespace == "controllers"
    assert cfg.ca_data == pki.ca_pem
    assert cfg.source == "in-cluster"
    assert (await cfg.auth.credentials()).token == "sa-token-1"


def test_in_cluster_ipv6(sa_dir: Path) -> None:
    cfg = load_in_cluster(service_account_dir=sa_dir, env={**ENV, "KUBERNETES_SERVICE_HOST": "fd00::1"})
    assert cfg.server == "https://[fd00::1]:443"


async def test_token_rotation_reread_periodically(sa_dir: Path) -> None:
    cfg = load_in_cluster(service_account_dir=sa_dir, env=ENV, token_reread_after=0.0)
    assert (await cfg.auth.credentials()).token == "sa-token-1"
    (sa_dir / "token").write_text("sa-token-2")
    assert (await cfg.auth.credentials()).token == "sa-token-2"


async def test_token_kept_between_rereads_and_refreshed_on_401(sa_dir: Path) -> None:
    cfg = load_in_cluster(service_account_dir=sa_dir, env=ENV, token_reread_after=3600)
    assert isinstance(cfg.auth, TokenFileAuth)
    (sa_dir / "token").write_text("sa-token-2")
    assert (await cfg.auth.credentials()).token == "sa-token-1"
    cfg.auth.invalidate()
    assert (await cfg.auth.credentials()).token == "sa-token-2"


def test_namespace_file_missing_defaults(sa_dir: Path) -> None:
    (sa_dir / "namespace").unlink()
    assert load_in_cluster(service_account_dir=sa_dir, env=ENV).namespace == "default"


def test_not_in_cluster() -> None:
    with pytest.raises(ConfigError) as exc:
        load_in_cluster(env={})
    assert str(exc.value) == "in-cluster: not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set"


def test_missing_token_names_file(sa_dir: Path) -> None:
    (sa_dir / "token").unlink()
    with pytest.raises(ConfigError) as exc:
        load_in_cluster(service_account_dir=sa_dir, env=ENV)
    assert str(exc.value).startswith(f"{sa_dir / 'token'}: cannot read token file")
