"""kubeloop's informer against a bare aiohttp + orjson loop, side by side (issue 15's table).

``python -m benchmarks.versus`` (``--help`` for the knobs). Modules: cli (entry point, the
interleaved runs, the table), child (the protocol both sides speak), kubeloop_side and bare_side
(each run in its own process), scale (the ``--scale`` run), chart (an SVG, no dependency).
"""
