"""The Markdown table, the ratios against the issue's targets and the PNG chart of the ratios."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _row(rows: list[dict[str, Any]], **match: Any) -> dict[str, Any] | None:
    for r in rows:
        if all(r.get(k) == v for k, v in match.items()):
            return r
    return None


def _div(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return round(a / b, 2)


def kopf_growth(result: dict[str, Any]) -> dict[str, Any] | None:
    """Fit kopf's ConfigMap warm-up time to a*N^k over every N it ran at, and extrapolate it to
    --objects. An extrapolation, labelled as such wherever it is shown."""
    import math

    points = sorted({r["objects"]: r["seconds"] for r in result["warmup"]
                     if r["framework"] == "kopf" and r["kind"] == "configmaps"}.items())
    if len(points) < 2:
        return None
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    k = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    a = math.exp(my - k * mx)
    target = result["settings"]["objects"]
    return {"points": points, "exponent": round(k, 2), "extrapolated_objects": target,
            "extrapolated_seconds": round(a * target ** k, 1)}


def ratios(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Each target of issue 7: what was measured, the target, met or not."""
    out: list[dict[str, Any]] = []
    s = result["settings"]
    warm = result["warmup"]

    def add(name: str, value: float | None, target: str, met: bool | None, note: str = "") -> None:
        out.append({"metric": name, "value": value, "target": target, "met": met, "note": note})

    for kind in s["kinds"].split(","):
        kl = _row(warm, framework="kubeloop", kind=kind, objects=s["kopf_objects"])
        kf = _row(warm, framework="kopf", kind=kind, objects=s["kopf_objects"])
        bare_n = _row(warm, framework="bare", kind=kind, objects=s["objects"])
        kl_n = _row(warm, framework="kubeloop", kind=kind, objects=s["objects"])
        if kl and kf:
            r = _div(kf["seconds"], kl["seconds"])
            add(f"warm-up speed-up over kopf, {kind} (N={s['kopf_objects']})", r, ">= 100x",
                None if r is None else r >= 100)
            r = _div(kf["seconds_in_process"], kl["seconds_in_process"])
            add(f"warm-up (in process: imports and interpreter start excluded) speed-up over kopf, {kind} "
                f"(N={s['kopf_objects']})", r, ">= 100x", None if r is None else r >= 100)
            m = _div(kf["bytes_per_object"], kl["bytes_per_object"])
            add(f"memory per cached object, kopf / kubeloop, {kind} (N={s['kopf_objects']})", m, ">= 2x",
                None if m is None else m >= 2)
        if kl_n and bare_n:
            r = _div(kl_n["seconds"], bare_n["seconds"])
            add(f"warm-up time kubeloop / bare, {kind} (N={s['objects']})", r, "<= 1.3x",
                None if r is None else r <= 1.3)
            r = _div(kl_n["seconds_in_process"], bare_n["seconds_in_process"])
            add(f"warm-up time (in process) kubeloop / bare, {kind} (N={s['objects']})", r, "<= 1.3x",
                None if r is None else r <= 1.3)
    growth = kopf_growth(result)
    kl_n = _row(warm, framework="kubeloop", kind="configmaps", objects=s["objects"])
    if growth and kl_n and s["objects"] not in dict(growth["points"]):
        r = _div(growth["extrapolated_seconds"], kl_n["seconds"])
        add(f"warm-up speed-up over kopf, configmaps (N={s['objects']}, kopf EXTRAPOLATED as "
            f"N^{growth['exponent']})", r, ">= 100x", None if r is None else r >= 100, "extrapolated")
    kl = _row(result["churn"], framework="kubeloop")
    kf = _row(result["churn"], framework="kopf")
    if kl and kf:
        r = _div(kf["cpu_us_per_change"], kl["cpu_us_per_change"])
        add("CPU per change, kopf / kubeloop", r, ">= 5x", None if r is None else r >= 5)
    kd = _row(result["churn"], framework="kubeloop-dict")
    if kd and kf:
        r = _div(kf["cpu_us_per_change"], kd["cpu_us_per_change"])
        add("CPU per change, kopf / kubeloop-dict (variant: plain-dict cache)", r, ">= 5x",
            None if r is None else r >= 5, "variant")
    if kl:
        p99 = kl["lag_p99_ms"]
        add(f"kubeloop change-to-handler p99 ms at {kl['achieved_rate']}/s", p99, "< 100 ms",
            None if p99 is None else p99 < 100)
    kl = _row(result["multi"], framework="kubeloop")
    if kl:
        add(f"watches opened by {kl['controllers']} kubeloop controllers on one kind", kl["open_watches"], "1",
            kl["open_watches"] == 1)
    kl = _row(result["storm"], framework="kubeloop")
    if kl:
        add(f"kubeloop writes in {kl['window_seconds']}s of steady state", kl["steady_writes"], "0",
            kl["steady_writes"] == 0)
    return out


def _table(rows: list[dict[str, Any]], cols: list[tuple[str, str]]) -> list[str]:
    lines = ["| " + " | ".join(h for h, _ in cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join("-" if r.get(k) is None else str(r.get(k)) for _, k in cols) + " |")
    return lines


def markdown(result: dict[str, Any]) -> str:
    v = result["versions"]
    lines = [f"# Peer benchmarks ({result['date']})", "",
             f"Command: `{result['command']}`", "",
             f"Machine: {result['machine']}; load average at start {result['load_average_at_start']}, at end "
             f"{result.get('load_average_at_end')}. Versions: " + ", ".join(
                 f"{k} {val}" for k, val in v.items() if not isinstance(val, dict)), ""]
    if result["ratios"]:
        lines += ["## Targets (issue 7)", ""]
        lines += _table(result["ratios"], [("metric", "metric"), ("measured", "value"), ("target", "target"),
                                           ("met", "met")])
        lines.append("")
    if result["warmup"]:
        lines += ["## 1. Cache warm-up (launch to all N objects held and indexed by a label; medians of "
                  "`runs`)", ""]
        lines += _table(result["warmup"], [("framework", "framework"), ("kind", "kind"), ("N", "objects"),
                                           ("seconds", "seconds"), ("in process s", "seconds_in_process"),
                                           ("runs", "repeats"),
                                           ("CPU s", "cpu_seconds"), ("RSS MB", "rss_mb"),
                                           ("idle RSS MB", "idle_rss_mb"), ("bytes/object", "bytes_per_object")])
        growth = kopf_growth(result)
        if growth and growth["extrapolated_objects"] not in dict(growth["points"]):
            lines += ["", f"kopf's ConfigMap warm-up grows as N^{growth['exponent']} over N = "
                      + ", ".join(str(n) for n, _ in growth["points"])
                      + f"; EXTRAPOLATED to N={growth['extrapolated_objects']}: "
                      f"~{growth['extrapolated_seconds']} s (not measured)."]
        sizes = ", ".join(f"{k} {d['bytes_per_object']} B" for k, d in result["json_size"].items())
        lines += ["", f"JSON size per object as served: {sizes}.", ""]
    if result["churn"]:
        lines += ["## 2. Churn (writer stamps the send time; the handler computes the lag)", ""]
        lines += _table(result["churn"], [("framework", "framework"), ("target/s", "target_rate"),
                                          ("achieved/s", "achieved_rate"), ("handler calls/s",
                                                                            "handler_calls_per_second"),
                                          ("p50 ms", "lag_p50_ms"), ("p99 ms", "lag_p99_ms"),
                                          ("max ms", "lag_max_ms"), ("CPU s", "cpu_seconds"),
                                          ("CPU us/change", "cpu_us_per_change"), ("peak RSS MB", "peak_rss_mb"),
                                          ("operator writes", "server_writes_by_operator")])
        lines.append("")
    if result["multi"]:
        lines += ["## 3. Many controllers on one kind (one process)", ""]
        lines += _table(result["multi"], [("framework", "framework"), ("controllers", "controllers"),
                                          ("N", "objects"), ("open watches", "open_watches"),
                                          ("watch requests", "watch_requests"), ("list requests", "list_requests"),
                                          ("s to all handled", "seconds_to_all_handled"), ("RSS MB", "rss_mb")])
        lines.append("")
    if result["storm"]:
        lines += ["## 4. Reconcile storm (parent/child with server-side apply, steady state)", ""]
        lines += _table(result["storm"], [("framework", "framework"), ("parents", "parents"),
                                          ("window s", "window_seconds"), ("resync s", "resync_seconds"),
                                          ("writes", "steady_writes"), ("by resource", "writes_by_resource")])
        lines.append("")
    return "\n".join(lines)


def chart(result: dict[str, Any], path: Path) -> None:
    """Bars: how many times kubeloop is better than kopf (log scale), with the target marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars: list[tuple[str, float, float | None]] = []
    for r in result["ratios"]:
        m, v = r["metric"], r["value"]
        if v is None:
            continue
        if m.startswith("warm-up speed-up") and "EXTRAPOLATED" in m:
            bars.append((f"warm-up vs kopf, configmaps N={result['settings']['objects']} (kopf EXTRAPOLATED)",
                         v, 100.0))
        elif m.startswith("warm-up speed-up"):
            bars.append((m.replace("warm-up speed-up over kopf", "warm-up vs kopf"), v, 100.0))
        elif m.startswith("memory per cached object"):
            bars.append((m.replace("memory per cached object, kopf / kubeloop", "memory/object vs kopf"), v, 2.0))
        elif m.startswith("CPU per change") and "kubeloop-dict" in m:
            bars.append(("CPU/change vs kopf (kubeloop-dict variant)", v, 5.0))
        elif m.startswith("CPU per change"):
            bars.append(("CPU/change vs kopf", v, 5.0))
        elif m.startswith("warm-up time kubeloop / bare"):
            bars.append((m.replace("warm-up time kubeloop / bare", "warm-up: bare / kubeloop"),
                         round(1 / v, 2) if v else 0.0, 1 / 1.3))
    kl, kf = _row(result["churn"], framework="kubeloop"), _row(result["churn"], framework="kopf")
    if kl and kf and kl["lag_p99_ms"] and kf["lag_p99_ms"]:
        bars.append(("p99 lag vs kopf", round(kf["lag_p99_ms"] / kl["lag_p99_ms"], 2), None))
    fig, ax = plt.subplots(figsize=(12, 0.5 * len(bars) + 2))
    labels = [b[0] for b in bars]
    values = [max(b[1], 1e-3) for b in bars]
    ax.barh(labels, values, color=["#999" if b[2] is None else "#2a7" if b[1] >= b[2] else "#d64" for b in bars])
    for i, b in enumerate(bars):
        if b[2] is not None:
            ax.plot([b[2], b[2]], [i - 0.4, i + 0.4], color="black", linewidth=2)
        ax.text(values[i], i, f" {b[1]}x", va="center")
    ax.axvline(1.0, color="grey", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlim(min([0.3, *values]) / 1.5, max([10.0, *values]) * 8)
    ax.invert_yaxis()
    ax.set_xlabel("times better for kubeloop (log scale; >1: kubeloop ahead; black tick: issue 7 target)")
    ax.set_title(f"kubeloop vs kopf {result['versions'].get('kopf')} and a bare aiohttp+orjson loop\n"
                 "green: target met, red: missed, grey: no ratio target")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
