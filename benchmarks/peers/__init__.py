"""Peer benchmarks: kubeloop against kopf and a bare aiohttp+orjson loop (issue 7).

``python -m benchmarks.peers --objects 10000 --out benchmarks/results/peers.json`` (``--quick``
for CI). Modules: cli (entry point), scenarios (the four scenarios), runner (operator
subprocesses), operators/ (each framework's operator), emulator, kopf_env, seed, writer,
procstats, report (Markdown table and chart).
"""
