"""Webhook speed: admission latency at a steady rate, and what conversion adds to a LIST.

1. Admission: AdmissionReviews POSTed over HTTPS (keep-alive, as kube-apiserver calls webhooks) at
   a fixed rate (default 200/s, open loop: a slow answer does not slow the sender) to kubeloop's
   `WebhookServer` with the example's typed validating handler (the Widget read as its model), and
   to a bare aiohttp handler that parses the review and answers `allowed: true`, on the same TLS
   setup. Latency percentiles of each.
2. Conversion: the emulator (`kubeloop apiserver`, a child process) holding N Widgets stored as
   v2, the example's conversion webhook served from this process. As kube-apiserver 1.24 (recorded
   in tests/webhooks/data/real-1.24.json), the v1 watch cache converts each Widget once when it is
   written, in the background (one ConversionReview each): timed from the bulk create until a
   `resourceVersion=0` LIST through v1 has them all. Then medians: LIST through v2 (stored: no
   conversion) and through v1, both with `resourceVersion=0` (the watch cache, what informers
   list) and without (etcd: one review per object at request time); `--rounds` of the v1 LIST from
   etcd, 7 times as many of the others (milliseconds each).

Writes benchmarks/results/webhooks.json and prints a table. A benchmark, not a test: run it on a
quiet machine (the figures of a shared one are noise-bound).

    .venv/bin/python benchmarks/webhook_bench.py [--rate 200] [--seconds 10] [--objects 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import ssl
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from examples.webhooks.operator import GROUP, webhooks
from kubeloop.testing import APIServerProcess
from kubeloop.webhooks import ClientConfig, EphemeralCertificates, WebhookServer

RESULTS = Path(__file__).parent / "results" / "webhooks.json"


def review(i: int) -> bytes:
    obj = {"apiVersion": f"{GROUP}/v2", "kind": "Widget",
           "metadata": {"name": f"w{i}", "namespace": "bench", "labels": {f"{GROUP}/managed": "true"}},
           "spec": {"replicas": 1 + i % 10}}
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": str(uuid.uuid4()), "kind": {"group": GROUP, "version": "v2", "kind": "Widget"},
        "resource": {"group": GROUP, "version": "v2", "resource": "widgets"}, "name": f"w{i}",
        "namespace": "bench", "operation": "CREATE", "userInfo": {"username": "bench"}, "object": obj,
        "oldObject": None, "dryRun": False, "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}}})


async def bare_handler(request: web.Request) -> web.Response:
    req = orjson.loads(await request.read())["request"]
    return web.Response(body=orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                           "response": {"uid": req["uid"], "allowed": True}}),
                        content_type="application/json")


async def steady(url: str, ctx: ssl.SSLContext, rate: float, seconds: float) -> list[float]:
    """Latencies (s) of requests sent at `rate`/s for `seconds`, open loop."""
    latencies: list[float] = []
    connector = aiohttp.TCPConnector(limit=64)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one(i: int) -> None:
            t0 = time.perf_counter()
            async with session.post(url, data=review(i), ssl=ctx,
                                    headers={"Content-Type": "application/json"}) as resp:
                body = await resp.read()
                assert resp.status == 200 and b'"allowed":true' in body, body[:200]
            latencies.append(time.perf_counter() - t0)

        for i in range(20):  # warm up the connections
            await one(i)
        latencies.clear()
        tasks = []
        start = time.perf_counter()
        n = int(rate * seconds)
        for i in range(n):
            delay = start + i / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(i)))
        await asyncio.gather(*tasks)
    return latencies


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def at(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000

    return {"n": len(ordered), "p50_ms": at(0.50), "p90_ms": at(0.90), "p99_ms": at(0.99),
            "max_ms": ordered[-1] * 1000, "mean_ms": statistics.fmean(ordered) * 1000}


async def admission(rate: float, seconds: float) -> dict[str, Any]:
    certs = EphemeralCertificates(["127.0.0.1"])
    ctx = ssl.create_default_context(cadata=certs.ca_bundle.decode())
    async with WebhookServer(webhooks, certs, host="127.0.0.1", port=0).running() as server:
        typed = await steady(f"{server.url}/validate/forbidden-names.widgets.{GROUP}", ctx, rate, seconds)

    app = web.Application()
    app.router.add_post("/validate", bare_handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=certs.ssl_context)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    bare = await steady(f"https://127.0.0.1:{port}/validate", ctx, rate, seconds)
    await runner.cleanup()
    return {"rate_per_s": rate, "seconds": seconds, "kubeloop_typed": percentiles(typed),
            "bare_aiohttp": percentiles(bare)}


async def conversion(objects: int, rounds: int) -> dict[str, Any]:
    certs = EphemeralCertificates(["127.0.0.1"])
    out: dict[str, Any] = {"objects": objects}
    async with WebhookServer(webhooks, certs, host="127.0.0.1", port=0).running() as server:
        await _lists(server, ClientConfig(url=server.url, ca_bundle=certs.ca_bundle), objects, rounds, out)
    out["ratio_v1_over_v2"] = out["list_v1_s"]["median"] / out["list_v2_s"]["median"]
    out["ratio_v1_over_v2_rv0"] = out["list_v1_rv0_s"]["median"] / out["list_v2_rv0_s"]["median"]
    out["reviews_per_list"] = objects
    out["reviews_per_list_rv0"] = 0
    return out


async def _lists(server: WebhookServer, cc: ClientConfig, objects: int, rounds: int, out: dict[str, Any]) -> None:
    with APIServerProcess() as api:
        async with aiohttp.ClientSession() as s:
            async with s.post(f"{api.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                              json=webhooks.crds(cc)[0]) as r:
                assert r.status == 201, await r.text()
            for _ in range(100):
                async with s.get(f"{api.url}/apis/{GROUP}/v1/namespaces/default/widgets") as r:
                    if r.status == 200:
                        break
                await asyncio.sleep(0.05)
            lines = b"\n".join(orjson.dumps({"apiVersion": f"{GROUP}/v2", "kind": "Widget",
                                             "metadata": {"name": f"w{i:05d}"}, "spec": {"replicas": 1 + i % 10}})
                               for i in range(objects))
            t0 = time.perf_counter()
            async with s.post(f"{api.url}/_kubeloop/bulk-create", data=lines,
                              params={"resource": "widgets", "group": GROUP, "version": "v2",
                                      "namespace": "default"}) as r:
                assert r.status == 200, await r.text()

            async def timed(version: str, params: dict[str, str]) -> float:
                t0 = time.perf_counter()
                async with s.get(f"{api.url}/apis/{GROUP}/{version}/namespaces/default/widgets", params=params) as r:
                    body = await r.read()
                    assert r.status == 200, body[:300]
                elapsed = time.perf_counter() - t0
                items = orjson.loads(body)["items"]
                assert len(items) == objects and {i["apiVersion"] for i in items} == {f"{GROUP}/{version}"}
                return elapsed

            await timed("v1", {"resourceVersion": "0"})  # waits for the watch cache's background conversions
            out["watch_cache_converted_s"] = time.perf_counter() - t0
            for name, version, params in (("v2", "v2", {}), ("v1", "v1", {}), ("v2_rv0", "v2", {"resourceVersion": "0"}),
                                          ("v1_rv0", "v1", {"resourceVersion": "0"})):
                await timed(version, params)  # warm up
                # the lists that convert nothing at request time take milliseconds: 7x the rounds, for
                # a median that the shared machine's noise moves less
                n = rounds if name == "v1" else 7 * rounds
                runs = [await timed(version, params) for _ in range(n)]
                out[f"list_{name}_s"] = {"median": statistics.median(runs), "runs": runs}


async def main(args: argparse.Namespace) -> None:
    result: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "cpus": len(os.sched_getaffinity(0)),
                    "note": args.note},
        "admission": await admission(args.rate, args.seconds),
        "conversion": await conversion(args.objects, args.rounds),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    a, c = result["admission"], result["conversion"]
    print(f"admission at {a['rate_per_s']:.0f}/s for {a['seconds']:.0f} s (ms)   p50     p99     max")
    for name in ("kubeloop_typed", "bare_aiohttp"):
        p = a[name]
        print(f"  {name:<34} {p['p50_ms']:7.2f} {p['p99_ms']:7.2f} {p['max_ms']:7.2f}")
    print(f"LIST of {c['objects']} Widgets (medians), resourceVersion=0 (watch cache): v2 (stored) "
          f"{c['list_v2_rv0_s']['median'] * 1000:.0f} ms, v1 {c['list_v1_rv0_s']['median'] * 1000:.0f} ms: "
          f"{c['ratio_v1_over_v2_rv0']:.2f}x (the v1 copies converted in the background in "
          f"{c['watch_cache_converted_s']:.1f} s after the bulk create)")
    print(f"  no resourceVersion (etcd): v2 {c['list_v2_s']['median'] * 1000:.0f} ms, v1 (one ConversionReview per "
          f"object) {c['list_v1_s']['median'] * 1000:.0f} ms: {c['ratio_v1_over_v2']:.1f}x")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--objects", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--note", default="")
    asyncio.run(main(parser.parse_args()))
