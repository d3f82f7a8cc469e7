"""Small plots as inline SVG strings for the HTML reports.

The meter history, the share bars and the interval plots are written directly as SVG
(:mod:`._svg`, no matplotlib: the run, tools and counterexample reports never import it);
the grouped shares and the line plots (bench, compare, enlarge) use matplotlib.
Only ``matplotlib.figure.Figure`` is used (no pyplot: no global backend state, no GUI), and
the SVG is post-processed so that it can sit inline in one HTML file:

* no XML prolog, DOCTYPE, metadata or namespace URLs (the page makes no network reference);
* every ``id`` gets a per-plot prefix, because several inline SVGs share one id space;
* "ink" (text, axes, ticks) is drawn in a sentinel colour that becomes ``currentColor`` and
  grid lines in one that becomes ``var(--grid)``, so the page's light/dark CSS colours them.

Data colours are mid-tones that read on both a light and a dark background.
"""

from __future__ import annotations

import io
import itertools
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..decide import wilson  # re-exported: the report views draw Wilson intervals
from ._svg import BLUE, GREEN, GREY, ORANGE, PALETTE, PURPLE, RED

__all__ = ["BLUE", "GREEN", "GREY", "ORANGE", "PALETTE", "PURPLE", "RED", "Interval", "bar_svg",
           "grouped_shares_svg", "intervals_svg", "lines_svg", "meter_history_svg", "wilson"]

_INK = "#010203"   # becomes currentColor
_GRID = "#020304"  # becomes var(--grid)

_counter = itertools.count(1)
_lock = threading.RLock()  # matplotlib's rcParams are process-global


@dataclass(frozen=True)
class Interval:
    """One mark of an interval plot: a point estimate (may be None) and its interval.

    Marks sharing a ``label`` share a row; ``offset`` shifts a mark within its row so that
    two measures of one thing (raw and calibrated, A and B) sit side by side. ``ref`` draws a
    row-specific reference tick (a per-case threshold).
    """

    label: str
    estimate: float | None
    low: float | None
    high: float | None
    color: str = BLUE
    marker: str = "o"
    offset: float = 0.0
    ref: float | None = None


def _rc() -> Any:
    return {"svg.hashsalt": "agentverity-props", "svg.fonttype": "path",
            "font.family": "DejaVu Sans", "font.size": 9.5,
            "text.color": _INK, "axes.labelcolor": _INK, "axes.edgecolor": _INK,
            "xtick.color": _INK, "ytick.color": _INK, "grid.color": _GRID,
            "axes.grid": True, "axes.axisbelow": True, "grid.linewidth": 0.6,
            "axes.spines.top": False,
            "axes.spines.right": False, "legend.frameon": False,
            "axes.facecolor": "none", "figure.facecolor": "none",
            "savefig.facecolor": "none", "savefig.edgecolor": "none"}


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure
    return Figure(figsize=(width, height), layout="constrained")


def _to_svg(fig: Any, *, title: str) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None,
                                             "Type": None})
    return _inline(buf.getvalue(), title=title)


_DROP = (re.compile(r"<\?xml.*?\?>", re.S), re.compile(r"<!DOCTYPE.*?>", re.S),
         re.compile(r"<metadata>.*?</metadata>", re.S),
         re.compile(r'\s+xmlns(:\w+)?="[^"]*"'))


def _inline(svg: str, *, title: str) -> str:
    with _lock:
        prefix = f"p{next(_counter)}-"
    svg = svg[svg.index("<svg"):]
    for rx in _DROP:
        svg = rx.sub("", svg)
    svg = svg.replace("xlink:href=", "href=")
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', svg)
    svg = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}{m.group(1)}"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", svg)
    svg = svg.replace(_INK, "currentColor").replace(_GRID, "var(--grid)")
    # make the plot scale with its container and name it for screen readers
    svg = re.sub(r'<svg\b([^>]*?)\swidth="[^"]*"\sheight="[^"]*"',
                 r'<svg\1 class="plot-svg" role="img"', svg, count=1)
    from markupsafe import escape
    return svg.replace(">", f"><title>{escape(title)}</title>", 1)


def meter_history_svg(history: Sequence[dict[str, Any]], *, epsilon: float,
                      indifference: float, estimate: float | None = None,
                      alpha: float = 0.05) -> str | None:
    """The meter's anytime interval narrowing as draws accrue, against the decision bounds.

    The call is ``verdict-deterministic`` once the band is wholly below ``epsilon*r`` and
    ``verdict-stochastic`` once wholly above ``epsilon/r``... drawn as dashed lines.
    """
    pts = [(h.get("draws"), h.get("ci_low"), h.get("ci_high")) for h in history
           if isinstance(h, dict)]
    pts = [(int(d), float(lo), float(hi)) for d, lo, hi in pts
           if isinstance(d, (int, float)) and isinstance(lo, (int, float))
           and isinstance(hi, (int, float))]
    if not pts:
        return None
    from ._svg import meter_history
    xs, lows, highs = zip(*pts, strict=True)
    r = indifference if indifference and indifference > 1 else 2.0
    return meter_history(list(xs), list(lows), list(highs), epsilon=epsilon, r=r,
                         estimate=estimate, level=f"{(1 - alpha) * 100:g}%",
                         title="meter interval as draws accrue")


def bar_svg(counts: dict[str, float], *, total: float | None = None,
            threshold: float | None = None, title: str, xlabel: str = "share",
            highlight: str | None = None, max_bars: int = 20) -> str | None:
    """Horizontal bars of shares (counts / total), largest first, with a threshold line."""
    items = [(str(k), float(v)) for k, v in counts.items() if isinstance(v, (int, float))]
    if not items:
        return None
    items.sort(key=lambda kv: -kv[1])
    n = total if total else sum(v for _, v in items) or 1.0
    if len(items) > max_bars:
        rest = sum(v for _, v in items[max_bars - 1:])
        items = [*items[:max_bars - 1], (f"({len(items) - max_bars + 1} others)", rest)]
    from ._svg import bars
    return bars(items, n=n, threshold=threshold, highlight=highlight, title=title,
                xlabel=xlabel)


def grouped_shares_svg(series: Sequence[tuple[str, dict[str, float], str]], *, title: str,
                       threshold: float | None = None, xlabel: str = "share") -> str | None:
    """Horizontal bars of each category's share in several distributions (before/after)."""
    series = [(n, {str(k): float(v) for k, v in c.items() if isinstance(v, (int, float))}, col)
              for n, c, col in series]
    cats = sorted({k for _, c, _ in series for k in c},
                  key=lambda k: -max(c.get(k, 0) / (sum(c.values()) or 1) for _, c, _ in series))
    if not cats:
        return None
    import matplotlib
    height = 0.8 / len(series)
    with _lock, matplotlib.rc_context(_rc()):
        fig = _figure(7.2, 1.1 + 0.3 * len(cats) * len(series))
        ax = fig.add_subplot()
        for i, (name, counts, color) in enumerate(series):
            total = sum(counts.values()) or 1.0
            ys = [len(cats) - 1 - j + (len(series) / 2 - 0.5 - i) * height
                  for j in range(len(cats))]
            shares = [counts.get(k, 0) / total for k in cats]
            ax.barh(ys, shares, height=height * 0.92, color=color, label=_short(name))
            for y, sh, k in zip(ys, shares, cats, strict=True):
                ax.text(sh + 0.01, y, f"{counts.get(k, 0):g} ({sh:.0%})", va="center",
                        fontsize=7.5)
        ax.set_yticks(range(len(cats)), [_short(k) for k in cats][::-1])
        if threshold is not None:
            ax.axvline(threshold, color=RED, linestyle="--", linewidth=1.2,
                       label=f"threshold {threshold:g}")
        ax.set_xlim(0, 1.15)
        ax.set_xlabel(xlabel)
        ax.grid(axis="y", visible=False)
        fig.legend(loc="outside right center", fontsize=8)
        return _to_svg(fig, title=title)


def intervals_svg(rows: Sequence[Interval], *, title: str, xlabel: str,
                  xlim: tuple[float, float] | None = (0.0, 1.0),
                  vlines: Sequence[tuple[float, str, str]] = (),
                  legend: Sequence[tuple[str, str, str]] = ()) -> str | None:
    """A forest plot: one row per label, a point and a horizontal interval.

    ``vlines`` are (x, colour, label) reference lines (a threshold, zero effect);
    ``legend`` entries are (marker, colour, label) explaining the row styles.
    """
    rows = [r for r in rows if r.low is not None or r.estimate is not None]
    if not rows:
        return None
    from ._svg import forest
    if xlim is None:
        xs = [v for r in rows for v in (r.low, r.high, r.estimate, r.ref) if v is not None]
        xs += [x for x, _, _ in vlines]
        pad = (max(xs) - min(xs)) * 0.05 or 0.05
        xlim = (min(xs) - pad, max(xs) + pad)
    return forest(rows, title=title, xlabel=xlabel, xlim=xlim, vlines=vlines, legend=legend)


def lines_svg(series: Sequence[tuple[str, Sequence[tuple[float, float]], str, str]], *,
              title: str, xlabel: str, ylabel: str,
              ylim: tuple[float, float] | None = (0.0, 1.02), log_x: bool = False) -> str | None:
    """Lines with markers: ``series`` is (label, points, colour, linestyle) per line."""
    series = [s for s in series if s[1]]
    if not series:
        return None
    import matplotlib
    with _lock, matplotlib.rc_context(_rc()):
        fig = _figure(7.2, 2.8)
        ax = fig.add_subplot()
        for label, pts, color, style in series:
            xs, ys = zip(*sorted(pts), strict=True)
            ax.plot(xs, ys, marker="o", markersize=4, color=color, linestyle=style,
                    linewidth=1.6, label=_short(label))
        if log_x:
            ax.set_xscale("log", base=2)
            xs_all = sorted({x for _, pts, _, _ in series for x, _ in pts})
            ax.set_xticks(xs_all, [f"{x:g}" for x in xs_all])
            ax.minorticks_off()
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        fig.legend(loc="outside right center", fontsize=8)
        return _to_svg(fig, title=title)


def _short(label: str, n: int = 38) -> str:
    # matplotlib treats $...$ as mathtext: escape it so user labels render literally
    label = " ".join(label.split()).replace("$", r"\$")
    return label if len(label) <= n else label[: n - 1] + "…"
