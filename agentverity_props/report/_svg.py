"""Plain SVG for the report's simplest plots, written directly (no matplotlib).

The meter history, the verdict-share bars and the interval (forest) plots are lines,
rectangles and labels on linear axes: drawing them here costs milliseconds, where importing
matplotlib and laying out its figures cost about a second a report (docs/benchmarks.md,
"HTML report time"). The output follows :mod:`._plots`' conventions: one inline ``<svg>``
with ``class="plot-svg" role="img"`` and a ``<title>``, ink in ``currentColor`` and grid
lines in ``var(--grid)`` so the page's light/dark CSS colours them, no id, no reference.
Every label is text from the result and is escaped (``markupsafe.escape``): data, never
markup.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

#: data colours: mid-tones that read on a light and on a dark background
BLUE, ORANGE, GREEN, RED, GREY, PURPLE = ("#4c8bf5", "#f08a3c", "#3ba55c", "#e5534b",
                                          "#8b949e", "#a371f7")
PALETTE = (BLUE, ORANGE, PURPLE, GREEN, RED, GREY)
#: the drawing's width in SVG units (it scales with the page)
WIDTH = 720
_FONT = 12
_CHAR = 6.6  # average advance of a 12 px sans-serif character
_INK = "currentColor"
_GRID = "var(--grid)"


def _esc(text: Any) -> str:
    from markupsafe import escape
    return str(escape(str(text)))


def _n(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def nice_ticks(lo: float, hi: float, n: int = 6) -> list[float]:
    """Round tick values covering [lo, hi].

    >>> nice_ticks(0, 1)
    [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    >>> nice_ticks(0, 150)
    [0, 50, 100, 150]
    """
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / max(1, n - 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    out, x = [], first
    while x <= hi + step * 1e-9:
        out.append(round(x, 10))
        x += step
    return out


def _fmt(v: float) -> str:
    return f"{v:g}"


class Canvas:
    """An SVG being written: a plot area inside margins, and its parts as strings."""

    def __init__(self, height: float, *, left: float, right: float = 16, top: float = 12,
                 bottom: float = 40) -> None:
        self.h = height
        self.x0, self.x1 = left, WIDTH - right
        self.y0, self.y1 = top, height - bottom
        self.parts: list[str] = []

    def line(self, x1: float, y1: float, x2: float, y2: float, *, color: str = _INK,
             width: float = 1.0, dash: str | None = None) -> None:
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" '
                          f'stroke="{color}" stroke-width="{width:g}"{d}/>')

    def text(self, x: float, y: float, s: str, *, anchor: str = "start", size: float = _FONT,
             color: str = _INK, rotate: bool = False) -> None:
        tr = f' transform="rotate(-90 {_n(x)} {_n(y)})"' if rotate else ""
        self.parts.append(f'<text x="{_n(x)}" y="{_n(y)}" font-size="{size:g}" '
                          f'text-anchor="{anchor}" fill="{color}"{tr}>{_esc(s)}</text>')

    def rect(self, x: float, y: float, w: float, h: float, color: str) -> None:
        self.parts.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(max(w, 0))}" '
                          f'height="{_n(h)}" fill="{color}"/>')

    def marker(self, x: float, y: float, kind: str, color: str, size: float = 5.5) -> None:
        r = size / 2 + 0.5
        if kind == "s":
            self.rect(x - r, y - r, 2 * r, 2 * r, color)
        elif kind == "d":
            self.parts.append(f'<path d="M{_n(x)} {_n(y - r - 1)}L{_n(x + r)} {_n(y)}'
                              f'L{_n(x)} {_n(y + r + 1)}L{_n(x - r)} {_n(y)}Z" fill="{color}"/>')
        else:
            self.parts.append(f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(r)}" fill="{color}"/>')

    def path(self, d: str, *, fill: str = "none", stroke: str = "none", width: float = 1.0,
             opacity: float = 1.0) -> None:
        self.parts.append(f'<path d="{d}" fill="{fill}" stroke="{stroke}" '
                          f'stroke-width="{width:g}" opacity="{opacity:g}"/>')

    def x_axis(self, sx: Callable[[float], float], ticks: Sequence[float], label: str) -> None:
        for t in ticks:
            x = sx(t)
            self.line(x, self.y0, x, self.y1, color=_GRID, width=0.6)
            self.line(x, self.y1, x, self.y1 + 4)
            self.text(x, self.y1 + 16, _fmt(t), anchor="middle", size=10.5)
        self.line(self.x0, self.y1, self.x1, self.y1)
        self.text((self.x0 + self.x1) / 2, self.y1 + 32, label, anchor="middle")

    def legend(self, items: Sequence[tuple[str, str, str]], *, y: float) -> None:
        """(kind, colour, label) in one row: kind ``line``, ``dash`` or a marker."""
        x = self.x0
        for kind, color, label in items:
            if kind in ("line", "dash", "band"):
                if kind == "band":
                    self.rect(x, y - 6, 18, 8, color)
                else:
                    self.line(x, y - 2, x + 18, y - 2, color=color, width=2,
                              dash="5 3" if kind == "dash" else None)
            else:
                self.line(x, y - 2, x + 18, y - 2, color=color, width=2)
                self.marker(x + 9, y - 2, kind, color)
            self.text(x + 24, y + 2, label, size=10.5)
            x += 24 + _CHAR * 0.9 * len(label) + 18

    def svg(self, title: str) -> str:
        return (f'<svg class="plot-svg" role="img" viewBox="0 0 {WIDTH} {_n(self.h)}" '
                f'font-family="sans-serif"><title>{_esc(title)}</title>'
                + "".join(self.parts) + "</svg>")


def _short(label: str, n: int = 38) -> str:
    label = " ".join(str(label).split())
    return label if len(label) <= n else label[: n - 1] + "…"


def _left_margin(labels: Sequence[str]) -> float:
    return min(300.0, 16 + _CHAR * max((len(s) for s in labels), default=4))


def meter_history(xs: Sequence[int], lows: Sequence[float], highs: Sequence[float], *,
                  epsilon: float, r: float, estimate: float | None, level: str,
                  title: str) -> str:
    """The meter's anytime interval as a step band over calls, on a square-root axis."""
    top = min(1.0, max(*highs, epsilon * r * 1.5) * 1.05)
    c = Canvas(300, left=62, bottom=62)
    xmax = xs[-1] * 1.02 if xs[-1] else 1.0

    def sx(v: float) -> float:
        return c.x0 + (c.x1 - c.x0) * v / xmax

    def sy(v: float) -> float:
        return c.y1 - (c.y1 - c.y0) * math.sqrt(max(0.0, min(v, top)) / top)

    for t in (t for t in (0, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0) if t <= top):
        y = sy(t)
        c.line(c.x0, y, c.x1, y, color=_GRID, width=0.6)
        c.text(c.x0 - 6, y + 4, _fmt(t), anchor="end", size=10.5)
    c.x_axis(sx, nice_ticks(0, xmax), "agent calls (draws)")
    c.line(c.x0, c.y0, c.x0, c.y1)
    c.text(16, (c.y0 + c.y1) / 2, "pair disagreement θ (√ scale)", anchor="middle",
           rotate=True)
    up = [f"{'M' if i == 0 else 'L'}{_n(sx(x))} {_n(sy(h))}"
          + (f"L{_n(sx(xs[i + 1]))} {_n(sy(h))}" if i + 1 < len(xs) else "")
          for i, (x, h) in enumerate(zip(xs, highs, strict=True))]
    down = [f"L{_n(sx(xs[i + 1]))} {_n(sy(lo))}L{_n(sx(x))} {_n(sy(lo))}"
            if i + 1 < len(xs) else f"L{_n(sx(x))} {_n(sy(lo))}"
            for i, (x, lo) in reversed(list(enumerate(zip(xs, lows, strict=True))))]
    c.path("".join(up) + "".join(down) + "Z", fill=BLUE, opacity=0.28)
    c.path("".join(up), stroke=BLUE, width=1.3)
    c.path("".join(f"{'M' if i == 0 else 'L'}{_n(sx(x))} {_n(sy(lo))}"
                   + (f"L{_n(sx(xs[i + 1]))} {_n(sy(lo))}" if i + 1 < len(xs) else "")
                   for i, (x, lo) in enumerate(zip(xs, lows, strict=True))),
           stroke=BLUE, width=1.3)
    c.line(c.x0, sy(epsilon), c.x1, sy(epsilon), width=1.1)
    c.line(c.x0, sy(epsilon * r), c.x1, sy(epsilon * r), color=RED, width=1.1, dash="5 3")
    c.line(c.x0, sy(epsilon / r), c.x1, sy(epsilon / r), color=GREEN, width=1.1, dash="5 3")
    items = [("band", BLUE, f"anytime {level} interval"), ("line", _INK, f"epsilon {epsilon:g}"),
             ("dash", RED, f"epsilon*r {epsilon * r:g}"),
             ("dash", GREEN, f"epsilon/r {epsilon / r:g}")]
    if estimate is not None:
        c.marker(sx(xs[-1]), sy(estimate), "o", ORANGE)
        items.append(("o", ORANGE, f"final estimate {estimate:.3f}"))
    c.legend(items, y=c.h - 8)
    return c.svg(title)


def bars(items: Sequence[tuple[str, float]], *, n: float, threshold: float | None,
         highlight: str | None, title: str, xlabel: str) -> str:
    """Horizontal bars of shares, largest on top, with a dashed threshold line."""
    labels = [_short(k) for k, _ in items]
    row = 24.0
    c = Canvas(56 + row * len(items) + (20 if threshold is not None else 0),
               left=_left_margin(labels),
               bottom=44 + (20 if threshold is not None else 0))

    def sx(v: float) -> float:
        return c.x0 + (c.x1 - c.x0) * v / 1.12

    c.x_axis(sx, [0, 0.2, 0.4, 0.6, 0.8, 1.0], xlabel)
    for i, ((k, v), lab) in enumerate(zip(items, labels, strict=True)):
        y = c.y0 + row * i + row / 2
        share = v / n
        c.rect(sx(0), y - row * 0.33, sx(share) - sx(0), row * 0.66,
               ORANGE if k == highlight else BLUE)
        c.text(c.x0 - 6, y + 4, lab, anchor="end")
        c.text(sx(share) + 5, y + 4, f"{int(v) if float(v).is_integer() else v:g} "
               f"({share:.0%})", size=10.5)
    if threshold is not None:
        c.line(sx(threshold), c.y0, sx(threshold), c.y1, color=RED, width=1.2, dash="5 3")
        c.legend([("dash", RED, f"threshold {threshold:g}")], y=c.h - 6)
    return c.svg(title)


def forest(rows: Sequence[Any], *, title: str, xlabel: str, xlim: tuple[float, float],
           vlines: Sequence[tuple[float, str, str]],
           legend: Sequence[tuple[str, str, str]]) -> str:
    """One row per label: a point and a horizontal interval (``_plots.Interval`` marks)."""
    labels = list(dict.fromkeys(r.label for r in rows))
    row = 26.0
    items = [(m if m in "osd" else "o", col, lab) for m, col, lab in legend]
    items += [("dash", col, lab) for _, col, lab in vlines]
    c = Canvas(58 + row * len(labels) + (22 if items else 0),
               left=_left_margin([_short(lab) for lab in labels]),
               bottom=46 + (22 if items else 0))
    lo, hi = xlim if xlim[1] > xlim[0] else (xlim[0], xlim[0] + 1)

    def sx(v: float) -> float:
        return c.x0 + (c.x1 - c.x0) * (min(max(v, lo), hi) - lo) / (hi - lo)

    c.x_axis(sx, nice_ticks(lo, hi), xlabel)
    ypos = {lab: c.y0 + row * i + row / 2 for i, lab in enumerate(labels)}
    for lab, y in ypos.items():
        c.text(c.x0 - 6, y + 4, _short(lab), anchor="end")
    for x, color, _ in vlines:
        c.line(sx(x), c.y0, sx(x), c.y1, color=color, width=1.1, dash="5 3")
    for r in rows:
        y = ypos[r.label] + r.offset * row
        if r.low is not None and r.high is not None:
            c.line(sx(r.low), y, sx(r.high), y, color=r.color, width=2.2)
            for e in (r.low, r.high):
                c.line(sx(e), y - 4, sx(e), y + 4, color=r.color, width=1.4)
        if r.estimate is not None:
            c.marker(sx(r.estimate), y, r.marker if r.marker in "osd" else "o", r.color)
        if r.ref is not None:
            c.marker(sx(r.ref), ypos[r.label], "d", RED, size=6)
    if items:
        c.legend(items, y=c.h - 6)
    return c.svg(title)
