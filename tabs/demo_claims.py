"""What a demo's explanation says about its figure, as data a test reads (issue 38, item 2).

A demo's explanation (`Said`) is its words in parts: plain framing (what the model is, what to do), and every
factual sentence about the figure as a `Claim` that carries the rule reading it off the figure the class is shown,
or, for what no figure on the page can show at a click (a training of minutes, GPT-2's weights that are not
shipped), as `Cited`: where it is checked or from. tests/app/test_demo_claims.py draws each demo's figures afresh,
applies every claim's rule, and refuses a number in an explanation outside a Claim or a Cited, so a new demo's
figure cannot be described unchecked. "Who reads whom?" said *Holy Spirit* / *Espíritu Santo* "makes
the weights cross": its gold circles cross, its darkest cells do not.

A rule takes `seen`, the demo's figures as a viewer reads them (visualize.reading.Cells by the page's figure id:
"att-one" the one-head heatmap, "att-overview" the layers x heads overview, "att-norms" the same head's value-weighted
norms, "patch-heads" and "patch-into" the patching section's heads grid and paths into the open head, "pe-pe" and
"pe-similarity" the Positional tab's sinusoids and their dot products).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from visualize.reading import Cells


@dataclass(frozen=True)
class Claim:
    """A sentence an explanation says about its figure, and how a viewer reads it off: `rule(seen) == expected`."""
    text: str
    rule: Callable[[dict], object]
    expected: object


@dataclass(frozen=True)
class Cited:
    """A sentence no figure drawn at the click can show, and where it is checked (a test, a card) or from (a paper)."""
    text: str
    source: str


@dataclass(frozen=True)
class Said:
    """A demo's explanation: its parts in order (plain text, Claim, Cited); str() is what the page shows."""
    parts: tuple

    def __str__(self) -> str:
        return "".join(p if isinstance(p, str) else p.text for p in self.parts)

    def __contains__(self, words: str) -> bool:
        return words in str(self)

    @property
    def claims(self) -> tuple:
        return tuple(p for p in self.parts if isinstance(p, Claim))

    @property
    def cited(self) -> tuple:
        return tuple(p for p in self.parts if isinstance(p, Cited))


def said(*parts) -> Said:
    return Said(tuple(parts))


# --- rules: what a viewer reads off a figure -------------------------------------------------------------------------

MARKERS = ("<s>", "</s>", "<pad>")


def open_head(seen) -> str:
    """The head the one-head heatmap shows, as "layer.head", read off its title ("…layer 1, head 3…")."""
    found = re.search(r"layer (\d+), head (\d+)", seen["att-one"].title)
    return f"{found[1]}.{found[2]}" if found else ""


def extreme_cell(cells: Cells, low: bool = False) -> str:
    """The darkest cell of a layers x heads grid, as "layer.head": its largest value, or its smallest (`low`)."""
    z = np.where(np.isnan(cells.z), np.inf if low else -np.inf, cells.z)
    i, j = np.unravel_index(np.argmin(z) if low else np.argmax(z), z.shape)
    return f"{cells.rows[i]}.{cells.columns[j]}"


def extreme_row(cells: Cells) -> int:
    """The row (its index) of a grid's largest cell: a paths grid's rows are each receiver's query, key, value in
    that order (tabs.attention.patching), whose labels a narrow figure cuts ("decoder self 1 …")."""
    return int(np.unravel_index(np.nanargmax(cells.z), cells.z.shape)[0])


def reads(cells: Cells, row: str) -> str:
    """The column label a row (by label, its first) puts the most weight on."""
    return cells.columns[cells.argmax(cells.row(row))]


def reads_backwards(cells: Cells) -> bool:
    """Whether each of the n output letters (rows, markers left out) puts its most weight on source letter n-1-i."""
    letters = [i for i, row in enumerate(cells.rows) if row not in MARKERS]
    return all(cells.argmax(i) == len(letters) - 1 - k for k, i in enumerate(letters))


def masked_exactly_above_diagonal(cells: Cells) -> bool:
    """Whether every cell right of the diagonal is masked (empty: drawn grey) and no cell on or left of it is."""
    empty = np.isnan(cells.z)
    return bool(np.array_equal(empty, np.triu(np.ones_like(empty), 1)))


def rows_sum_to_one(cells: Cells) -> bool:
    """Whether every row's weights sum to 1 over the cells it may see (to the figure's rounding)."""
    return bool(np.allclose(np.nansum(cells.z, axis=1), 1, atol=1e-3))


def share_at_offset(cells: Cells, offset: int, rows=None) -> float:
    """The mean weight of rows (default: every row that has one) on the column `offset` from themselves, in
    hundredths (-1: the token before)."""
    rows = [i for i in (range(len(cells.rows)) if rows is None else rows) if 0 <= i + offset < len(cells.columns)]
    return round(float(np.mean([cells.z[i, i + offset] for i in rows])), 2)


def period(cells: Cells) -> int:
    """The length of the repeated part of a self-attention map's input (rows: the same letters twice)."""
    return len(cells.rows) // 2


def repeats_after(cells: Cells, n: int) -> bool:
    """Whether the rows after the first n repeat the first ones, letter for letter."""
    return len(cells.rows) > n and cells.rows[n:] == cells.rows[:len(cells.rows) - n]


def induction_stripe(cells: Cells) -> float:
    """The share of the second copy's rows whose most weight is on the token after their earlier copy."""
    n = period(cells)
    return round(float(np.mean([cells.argmax(i) == i - n + 1 for i in range(n, len(cells.rows))])), 2)


def gold_link(cells: Cells, row: str) -> str:
    """The column of the gold circle on a row (by label, its first), or "" when it has none or several."""
    found = [j for i, j in cells.marks if i == cells.row(row)]
    return cells.columns[found[0]] if len(found) == 1 else ""


def depends_only_on_distance(cells: Cells) -> bool:
    """Whether every diagonal of a position x position map holds one value (to 1e-6 of its largest)."""
    z, scale = cells.z, float(np.nanmax(np.abs(cells.z)))
    return all(np.ptp(np.diagonal(z, k)) <= 1e-6 * scale for k in range(-z.shape[0] + 1, z.shape[1]))


def largest_bar(cells: Cells, row: int = 0) -> tuple[str, float]:
    """(the column, its value to 2 decimals) of a bar chart's row's longest bar: the head that writes most of the
    features figure's `row`-th feature ("head 3.2", 0.71)."""
    column = int(np.nanargmax(cells.z[row]))
    return cells.columns[column], round(float(cells.z[row, column]), 2)


def first_feature(cells: Cells) -> str:
    """The feature the features figure lists first (the most active at the row): "f170" of "f170 (5.50)"."""
    return cells.rows[0].split()[0]


def fires_at(cells: Cells) -> tuple[str, ...]:
    """The labels of the places where a strip's bar is above zero (where the feature fires in the input)."""
    return tuple(label for label, value in zip(cells.rows, cells.z[:, 0]) if value > 0)

