"""client-go's request metrics, counted by the transport over real HTTP (emulator or real cluster):
``rest_client_requests_total{code,method,host}`` per attempt and
``rest_client_request_duration_seconds{verb,host}`` per request."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import pytest

from kubeloop import metrics
from kubeloop.client import Client, ClientConnectionError, NotFound, RetryPolicy
from kubeloop.config import ClusterConfig
from kubeloop.metrics import REST_CLIENT
from kubeloop.testing import TestCluster

from ..builders import cm


def scraped() -> str:
    return metrics.exposition()[0].decode()


async def test_each_attempt_is_counted_by_code_method_and_host(apiserver: TestCluster, client: Client,
                                                                ns: str) -> None:
    host = urlsplit(apiserver.url).netloc
    before = REST_CLIENT.requests()
    await client.create(cm("counted", {"x": "1"}), namespace=ns)
    await client.get("v1/ConfigMap", "counted", namespace=ns)
    with pytest.raises(NotFound):
        await client.get("v1/ConfigMap", "absent", namespace=ns)
    after = REST_CLIENT.requests()

    def delta(code: str, method: str) -> int:
        return after.get((code, method, host), 0) - before.get((code, method, host), 0)

    assert delta("201", "POST") >= 1 and delta("200", "GET") >= 1 and delta("404", "GET") >= 1
    text = scraped()
    assert f'rest_client_requests_total{{code="404",host="{host}",method="GET"}}' in text
    assert f'rest_client_request_duration_seconds_bucket{{host="{host}",le="0.005",verb="GET"}}' in text
    assert f'rest_client_request_duration_seconds_count{{host="{host}",verb="POST"}}' in text


async def test_a_request_without_a_response_is_counted_as_an_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    host = f"127.0.0.1:{port}"
    async with Client(ClusterConfig(f"http://{host}"), retry=RetryPolicy(max_attempts=2, base_delay=0.01)) as c:
        with pytest.raises(ClientConnectionError):
            await c.get("v1/ConfigMap", "x", namespace="default")
    assert REST_CLIENT.requests()[("<error>", "GET", host)] == 2  # each attempt, as client-go counts
    assert f'rest_client_request_duration_seconds_count{{host="{host}",verb="GET"}} 1.0' in scraped()
