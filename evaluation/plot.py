"""``report/eval.png``: harvest rate and recall against pages fetched, one panel per (site, topic).

Each strategy or setting variant is one colour; harvest rate is the solid line, recall the
dashed one, so a variant that finds on-topic pages sooner shows as a curve that rises earlier.
The dotted black line is the ceiling: the harvest rate of a crawler that knew the labels and
the link graph.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

    from evaluation.run import Result

#: Fonts with Chinese glyphs, used (when installed) where the default font has none.
CJK_FONTS = (
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "SimHei",
    "Microsoft YaHei",
)
COLUMNS = 3


def recall_curve(result: Result) -> np.ndarray:
    """Labelled on-topic pages found among the first n fetched, over all labelled ones."""
    hits = np.cumsum([page["on_topic"] for page in result.pages])
    return hits / result.labelled if result.labelled else np.zeros(len(hits))


def cjk_fonts() -> list[str]:
    """The installed fonts of ``CJK_FONTS``. Matplotlib caches its font list once, so a
    font installed later (``make fonts``) is looked for among the system's font files."""
    from matplotlib.font_manager import findSystemFonts, fontManager

    found = [font for font in CJK_FONTS if font in {f.name for f in fontManager.ttflist}]
    if not found:
        for path in findSystemFonts():
            if any(mark in Path(path).name.lower() for mark in ("wqy", "cjk", "sourcehan")):
                fontManager.addfont(path)
        found = [font for font in CJK_FONTS if font in {f.name for f in fontManager.ttflist}]
    return found


def plot(results: Sequence[Result], path: Path) -> None:
    import matplotlib
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state
    from matplotlib.lines import Line2D

    panels: dict[tuple[str, str], list[Result]] = {}
    for result in results:
        panels.setdefault((result.site, result.topic), []).append(result)
    labels = list(dict.fromkeys(result.label for result in results))
    colours = {label: f"C{i % 10}" for i, label in enumerate(labels)}
    family = ["DejaVu Sans", *cjk_fonts()]

    columns = min(COLUMNS, max(len(panels), 1))
    rows = max(1, math.ceil(len(panels) / columns))
    with matplotlib.rc_context({"font.family": family}):
        figure = Figure(figsize=(5 * columns, 3.4 * rows + 0.8), layout="constrained")
        grid = figure.subplots(rows, columns, squeeze=False, sharey=True)
        for axes, ((site, topic), group) in zip(grid.flat, panels.items(), strict=False):
            best = group[0].ceiling
            axes.plot(np.arange(1, len(best) + 1), best, color="black", linestyle=":")
            for result in group:
                fetched = np.arange(1, len(result.curve) + 1)
                colour = colours[result.label]
                axes.plot(fetched, result.curve, color=colour)
                axes.plot(fetched, recall_curve(result), color=colour, linestyle="--")
            axes.set_title(f"{site}: {topic}", fontsize=10)
            axes.set_ylim(0, 1.02)
            axes.set_xlabel("pages fetched")
            axes.grid(alpha=0.3)
        for axes in grid[:, 0]:
            axes.set_ylabel("harvest rate, recall")
        for axes in grid.flat[len(panels) :]:
            axes.set_visible(False)
        handles = [Line2D([], [], color=colours[label], label=label) for label in labels]
        handles += [
            Line2D([], [], color="black", label="harvest rate"),
            Line2D([], [], color="black", linestyle="--", label="recall"),
            Line2D([], [], color="black", linestyle=":", label="ceiling"),
        ]
        # As many entries a row as the figure is wide for (a line and its label, about 0.08
        # inch a character): with one panel and long variant names, six overflowed it.
        entry = 0.7 + 0.08 * max(len(handle.get_label()) for handle in handles)
        fit = max(1, int(5 * columns / entry))
        figure.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), fit))
        figure.savefig(path, dpi=100)
