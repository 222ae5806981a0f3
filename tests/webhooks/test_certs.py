"""Certificates: when they are renewed (with the clock given), the cert-manager directory mode, the
Secret's contents, and the caBundle put back when someone resets it."""

from __future__ import annotations

import asyncio
import base64
import datetime
import os
from pathlib import Path

import pytest

from kubeloop import Client, metrics
from kubeloop.webhooks import (
    CertificateBundle,
    ClientConfig,
    DirectoryCertificates,
    SecretCertificates,
    Webhooks,
    inject_ca_bundle,
    service_hosts,
)

T0 = datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC)
DAY = datetime.timedelta(days=1)


def test_the_serving_certificate_is_renewed_with_a_third_of_its_life_left() -> None:
    hosts = service_hosts("ops", "widgets")
    assert "widgets.ops.svc" in hosts
    b = CertificateBundle.create(hosts, now=T0, validity=90 * DAY, ca_validity=900 * DAY)
    assert b.valid_for(hosts) and not b.valid_for([*hosts, "other"])
    assert b.renewed(hosts, now=T0 + 50 * DAY, validity=90 * DAY, ca_validity=900 * DAY) is b
    later = b.renewed(hosts, now=T0 + 61 * DAY, validity=90 * DAY, ca_validity=900 * DAY)
    assert later is not b and later.ca_pem == b.ca_pem and later.cert_pem != b.cert_pem
    assert later.not_after > b.not_after
    # new host names: a new certificate at once
    more = b.renewed([*hosts, "127.0.0.1"], now=T0 + DAY, validity=90 * DAY, ca_validity=900 * DAY)
    assert more.valid_for([*hosts, "127.0.0.1"])


def test_a_renewed_ca_keeps_the_old_one_in_the_bundle_while_it_is_valid() -> None:
    hosts = ["127.0.0.1"]
    b = CertificateBundle.create(hosts, now=T0, validity=30 * DAY, ca_validity=90 * DAY)
    rolled = b.renewed(hosts, now=T0 + 61 * DAY, validity=30 * DAY, ca_validity=90 * DAY)
    assert len(rolled.cas) == 2 and rolled.cas[1] == b.cas[0]
    assert rolled.serving.issuer == rolled.cas[0].subject  # signed by the new CA
    assert len(rolled.cas) == 2 and rolled.ca_bundle(T0 + 61 * DAY).count(b"BEGIN CERTIFICATE") == 2
    assert rolled.ca_bundle(T0 + 91 * DAY).count(b"BEGIN CERTIFICATE") == 1  # the old CA expired
    # a serving certificate never outlives its CA
    short = CertificateBundle.create(hosts, now=T0, validity=300 * DAY, ca_validity=10 * DAY)
    assert short.not_after <= short.cas[0].not_valid_after_utc


def test_the_secret_data_round_trips_and_bad_data_says_what_is_wrong() -> None:
    b = CertificateBundle.create(["127.0.0.1"])
    assert CertificateBundle.from_secret_data(b.secret_data()) == b
    with pytest.raises(ValueError, match=r"missing tls\.key"):
        CertificateBundle.from_secret_data({**b.secret_data(), "tls.key": ""})
    with pytest.raises(ValueError, match="unreadable"):
        CertificateBundle.from_secret_data({**b.secret_data(), "tls.crt": base64.b64encode(b"junk").decode()})


async def test_directory_mode_reloads_what_cert_manager_writes(tmp_path: Path) -> None:
    def write(bundle: CertificateBundle, stamp: float) -> None:
        for name, data in (("tls.crt", bundle.cert_pem), ("tls.key", bundle.key_pem), ("ca.crt", bundle.ca_pem)):
            (tmp_path / name).write_bytes(data)
            os.utime(tmp_path / name, (stamp, stamp))

    first, second = CertificateBundle.create(["127.0.0.1"]), CertificateBundle.create(["127.0.0.1"])
    write(first, 1_000)
    source = DirectoryCertificates(tmp_path, poll_interval=0.05)
    assert source.ready and source.ca_bundle == first.ca_pem
    assert metrics.REGISTRY.get_sample_value("kubeloop_webhook_certificate_expiry_timestamp_seconds",
                                             {"source": f"dir:{tmp_path}", "certificate": "serving"}) == \
        first.not_after.timestamp()
    stop = asyncio.Event()
    task = asyncio.create_task(source.run(stop))
    write(second, 2_000)
    for _ in range(100):
        if source.bundle is not None and source.bundle.cert_pem == second.cert_pem:
            break
        await asyncio.sleep(0.02)
    assert source.bundle is not None and source.bundle.cert_pem == second.cert_pem
    (tmp_path / "tls.key").write_bytes(b"half written")  # a bad write keeps the served certificate
    os.utime(tmp_path / "tls.key", (3_000, 3_000))
    await asyncio.sleep(0.2)
    assert source.bundle.cert_pem == second.cert_pem
    stop.set()
    await task
    with pytest.raises(ValueError, match="webhook certificates in"):
        DirectoryCertificates(tmp_path / "missing")


async def test_a_reset_ca_bundle_is_put_back(client: Client, namespace: str) -> None:
    hooks = Webhooks(f"{namespace}.tests.kubeloop.dev")

    @hooks.validating("v1/configmaps", namespaces=[namespace])
    def nothing(req: object) -> None:
        return None

    certs = SecretCertificates(client, namespace, "tls", ["127.0.0.1"], configurations=[hooks.name])
    config = hooks.validating_configuration(ClientConfig(url="https://127.0.0.1:1"))
    assert config is not None
    await client.create(config)
    try:
        bundle = await certs.sync()
        stored = await client.get("admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration", hooks.name)
        assert base64.b64decode(stored["webhooks"][0]["clientConfig"]["caBundle"]) == bundle.ca_bundle()
        await client.replace(config | {"metadata": stored["metadata"]})  # `kubectl apply` of the manifest: empty
        assert await inject_ca_bundle(client, bundle.ca_bundle(), configurations=[hooks.name]) == 1
        assert await inject_ca_bundle(client, bundle.ca_bundle(), configurations=[hooks.name]) == 0
        secret = await client.get("v1/Secret", "tls", namespace=namespace)
        assert secret["type"] == "kubernetes.io/tls"
        assert CertificateBundle.from_secret_data(secret["data"]) == bundle
    finally:
        await client.delete("admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration", hooks.name)
