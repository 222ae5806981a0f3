"""Bar and line charts as hand-written SVG (no plotting dependency)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

_FONT = 'font-family="sans-serif" font-size="12"'
KUBELOOP, BARE, CLIENT_GO, TARGET = "#2b6cb0", "#a0a0a0", "#38a169", "#c53030"

Bar = tuple[str, list[tuple[float | None, str]], float | None]
"""(label, [(value or None, colour), ...], target or None)."""


def _bars(y0: float, title: str, items: Sequence[Bar], width: int = 900, label_w: int = 360) -> tuple[list[str], float]:
    """A panel of horizontal bars, one group per item, one bar per value."""
    out = [f'<text x="10" y="{y0 + 16}" {_FONT} font-weight="bold">{escape(title)}</text>']
    top = max([v for _, vs, t in items for v in [*(x for x, _ in vs), t] if v is not None] + [1.0]) * 1.1
    plot_w = width - label_w - 60
    y = y0 + 28
    for label, values, t in items:
        out.append(f'<text x="{label_w - 6}" y="{y + 12}" {_FONT} text-anchor="end">{escape(label)}</text>')
        dy = 0
        for value, colour in values:
            if value is None:
                continue
            w = max(1.0, value / top * plot_w)
            out.append(f'<rect x="{label_w}" y="{y + dy}" width="{w:.1f}" height="8" fill="{colour}"/>')
            out.append(f'<text x="{label_w + w + 4:.1f}" y="{y + dy + 8}" font-family="sans-serif" '
                       f'font-size="10">{value:.2f}</text>')
            dy += 9
        if t is not None:
            x = label_w + t / top * plot_w
            out.append(f'<line x1="{x:.1f}" y1="{y - 2}" x2="{x:.1f}" y2="{y + dy + 1}" stroke="{TARGET}" '
                       f'stroke-width="2"/>')
        y += max(dy, 9) + 10
    return out, y + 10


def _target(text: str) -> float | None:
    """The number in a target such as "<= 0.8x client-go"."""
    if "<=" not in text:
        return None
    try:
        return float(text.split("<=", 1)[1].strip().split("x", 1)[0])
    except ValueError:
        return None


def write_chart(path: Path, rows: list[dict[str, Any]], title: str) -> None:
    """Two panels: kubeloop's time and CPU as ratios to client-go and to the bare loop, and memory
    held as a multiple of the JSON for each side."""
    legend = [(KUBELOOP, "kubeloop / client-go (or kubeloop)"), (BARE, "kubeloop / bare loop (or bare loop)"),
              (CLIENT_GO, "client-go")]
    parts: list[str] = [f'<text x="10" y="20" font-family="sans-serif" font-size="14" font-weight="bold">{escape(title)}</text>']
    x = 10
    for colour, text in legend:
        parts.append(f'<rect x="{x}" y="30" width="10" height="10" fill="{colour}"/><text x="{x + 14}" y="39" {_FONT}>'
                     f'{escape(text)}</text>')
        x += 14 + 7 * len(text) + 16
    parts.append(f'<line x1="{x}" y1="30" x2="{x}" y2="41" stroke="{TARGET}" stroke-width="2"/>'
                 f'<text x="{x + 6}" y="39" {_FONT}>target</text>')
    ratios: list[Bar] = [(r["metric"], [(r["vs_client_go"], KUBELOOP), (r["vs_bare"], BARE)], _target(r["target"]))
                         for r in rows if r["unit"] in ("s", "us", "k")]
    memory: list[Bar] = [(r["metric"].replace(" / JSON", ""),
                          [(r["kubeloop"], KUBELOOP), (r["bare"], BARE), (r["client_go"], CLIENT_GO)], None)
                         for r in rows if r["unit"] == "x JSON"]
    y = 50.0
    if ratios:
        p, y = _bars(y, "time and CPU: kubeloop / client-go and kubeloop / bare loop (lower is better)", ratios)
        parts += p
    if memory:
        p, y = _bars(y, "memory held / JSON size without managedFields (lower is better)", memory)
        parts += p
    _svg(path, 900, y, parts)


def write_lines(path: Path, title: str, xs: list[float],
                series: list[tuple[str, str, list[float], list[float] | None]]) -> None:
    """One small panel per series (label, unit, kubeloop's values, the bare loop's or None) against xs
    (log scale): the scale chart."""
    import math

    width, panel_h = 900, 170
    parts = [f'<text x="10" y="20" font-family="sans-serif" font-size="14" font-weight="bold">{escape(title)}</text>']
    lx = [math.log10(x) for x in xs]
    x_lo, x_hi = min(lx), max(lx) if max(lx) > min(lx) else min(lx) + 1
    left, plot_w, plot_h = 90, width - 140, panel_h - 60
    for i, (label, unit, ys, bare) in enumerate(series):
        top = 40 + i * panel_h
        every = ys + (bare or [])
        y_hi = max(every) * 1.25 if every and max(every) > 0 else 1.0
        parts.append(f'<text x="10" y="{top + 12}" {_FONT} font-weight="bold">{escape(label)} ({escape(unit)})</text>')
        parts.append(f'<line x1="{left}" y1="{top + 20 + plot_h}" x2="{left + plot_w}" y2="{top + 20 + plot_h}" '
                     f'stroke="#444"/><line x1="{left}" y1="{top + 20}" x2="{left}" y2="{top + 20 + plot_h}" stroke="#444"/>')
        pxs = [left + (v - x_lo) / (x_hi - x_lo) * plot_w for v in lx]
        for x, px in zip(xs, pxs, strict=True):
            parts.append(f'<text x="{px:.1f}" y="{top + 34 + plot_h}" font-family="sans-serif" font-size="10" '
                         f'text-anchor="middle">{int(x):,}</text>')
        for values, colour in ((bare, BARE), (ys, KUBELOOP)):
            if values is None:
                continue
            pts = []
            for px, y in zip(pxs, values, strict=True):
                py = top + 20 + plot_h - y / y_hi * plot_h
                pts.append(f"{px:.1f},{py:.1f}")
                parts.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="4" fill="{colour}"/>')
                parts.append(f'<text x="{px + 6:.1f}" y="{py - 6:.1f}" font-family="sans-serif" font-size="10">'
                             f'{y:.3g}</text>')
            parts.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<text x="{left - 6}" y="{top + 24}" font-family="sans-serif" font-size="10" '
                     f'text-anchor="end">{y_hi:.3g}</text><text x="{left - 6}" y="{top + 20 + plot_h}" '
                     f'font-family="sans-serif" font-size="10" text-anchor="end">0</text>')
    _svg(path, width, 40 + len(series) * panel_h, parts)


def _svg(path: Path, width: float, height: float, parts: list[str]) -> None:
    body = "\n".join(parts)
    path.write_text(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
                    f'viewBox="0 0 {width:.0f} {height:.0f}">\n<rect width="100%" height="100%" fill="white"/>\n'
                    f"{body}\n</svg>\n")
