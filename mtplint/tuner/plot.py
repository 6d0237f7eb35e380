"""A hand-written SVG of MTP speed-up against batch size (``mtplint crossover --plot``).

No plotting library: axes, a log2 batch axis, one polyline per (engine, k), the 1.0x line, a legend
and a title -- enough for a README or an issue comment.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mtplint.tuner.batching import Crossover, losses_cell

HEIGHT = 420
LEFT, TOP, BOTTOM = 60, 40, 50
#: the plot area's width; the legend to its right is as wide as its longest label
PLOT_WIDTH = 490
#: an upper bound on the advance of one character at font-size 12 in a sans-serif face (DejaVu Sans, the
#: widest common fallback, averages ~7 px on these labels), so the legend is never cut at the right edge
CHAR_WIDTH = 7.5
#: legend swatch (24 px) plus the gaps around it
LEGEND_PADDING = 12 + 30 + 12
#: the batch axis runs 1 .. 2^MAX_POWER
MAX_POWER = 9
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf")
DASHES = ("", "6 3", "2 3")


def escape(text: str) -> str:
    """``xml.sax.saxutils.escape``: ``&``, ``<`` and ``>`` as entities (that module imports
    ``urllib.request``, and with it ``http.client``, ``email`` and ``ssl``, which a ``crossover`` run
    has no other use for)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def crossover_svg(curves: Sequence[Crossover], title: str) -> str:
    """The SVG document: one polyline per curve (speed-up at batch 1, 2, 3, ... 512)."""
    batches = range(1, 2**MAX_POWER + 1)
    values = [[curve.speedup_at(b) for b in batches] for curve in curves]
    top = max(1.25, math.ceil(max(max(v) for v in values) * 4 + 0.5) / 4)
    labels = [f"{curve.engine} k={curve.draft_tokens} (loses at {losses_cell(curve)})" for curve in curves]
    legend_width = LEGEND_PADDING + CHAR_WIDTH * max((len(label) for label in labels), default=0)
    plot_w, plot_h = PLOT_WIDTH, HEIGHT - TOP - BOTTOM
    width = max(math.ceil(LEFT + plot_w + legend_width), math.ceil(CHAR_WIDTH * 14 / 12 * len(title)) + 20)

    def x(batch: float) -> float:
        return LEFT + plot_w * math.log2(batch) / MAX_POWER

    def y(value: float) -> float:
        return TOP + plot_h * (1 - min(value, top) / top)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{HEIGHT}" '
             f'viewBox="0 0 {width} {HEIGHT}" font-family="sans-serif" font-size="12">',
             f'<title>{escape(title)}</title>',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<text x="{width / 2:.0f}" y="22" text-anchor="middle" font-size="14">{escape(title)}</text>']
    # axes and grid
    parts.append(f'<g class="axes" stroke="#333" fill="none"><line x1="{LEFT}" y1="{TOP + plot_h}" '
                 f'x2="{LEFT + plot_w}" y2="{TOP + plot_h}"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" '
                 f'y2="{TOP + plot_h}"/></g>')
    ticks = ['<g class="ticks" fill="#333">']
    for power in range(MAX_POWER + 1):
        tx = x(2**power)
        ticks.append(f'<line x1="{tx:.1f}" y1="{TOP}" x2="{tx:.1f}" y2="{TOP + plot_h}" stroke="#eee"/>'
                     f'<text x="{tx:.1f}" y="{TOP + plot_h + 16}" text-anchor="middle">{2**power}</text>')
    step = 0.25 if top <= 2 else 0.5
    value = 0.0
    while value <= top + 1e-9:
        ty = y(value)
        ticks.append(f'<line x1="{LEFT}" y1="{ty:.1f}" x2="{LEFT + plot_w}" y2="{ty:.1f}" stroke="#eee"/>'
                     f'<text x="{LEFT - 6}" y="{ty + 4:.1f}" text-anchor="end">{value:.2f}x</text>')
        value += step
    ticks.append('</g>')
    parts.extend(ticks)
    parts.append(f'<text x="{LEFT + plot_w / 2:.0f}" y="{HEIGHT - 12}" text-anchor="middle">'
                 'concurrent sequences (batch, log scale)</text>')
    parts.append(f'<text x="16" y="{TOP + plot_h / 2:.0f}" text-anchor="middle" '
                 f'transform="rotate(-90 16 {TOP + plot_h / 2:.0f})">speed-up with MTP</text>')
    # the break-even line
    parts.append(f'<line class="break-even" x1="{LEFT}" y1="{y(1):.1f}" x2="{LEFT + plot_w}" y2="{y(1):.1f}" '
                 'stroke="#000" stroke-dasharray="4 4"/>')
    engines = list(dict.fromkeys(curve.engine for curve in curves))
    legend = ['<g class="legend">']
    for index, (curve, series, label) in enumerate(zip(curves, values, labels, strict=True)):
        colour = COLOURS[index % len(COLOURS)]
        dash = DASHES[engines.index(curve.engine) % len(DASHES)]
        points = " ".join(f"{x(b):.1f},{y(v):.1f}" for b, v in zip(batches, series, strict=True))
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(f'<polyline class="curve" data-engine="{escape(curve.engine)}" data-k="{curve.draft_tokens}" '
                     f'fill="none" stroke="{colour}" stroke-width="2"{dash_attr} points="{points}">'
                     f'<title>{escape(label)}</title></polyline>')
        ly = TOP + 10 + 18 * index
        lx = LEFT + plot_w + 12
        legend.append(f'<line x1="{lx}" y1="{ly}" x2="{lx + 24}" y2="{ly}" stroke="{colour}" stroke-width="2"'
                      f'{dash_attr}/><text x="{lx + 30}" y="{ly + 4}">{escape(label)}</text>')
    legend.append('</g>')
    parts.extend(legend)
    parts.append('</svg>')
    return "\n".join(parts) + "\n"
