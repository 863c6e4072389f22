"""The comparison of attention variants as tables a room can read: a short main table and the details.

Rows are the plain dicts of transformer.train.compare.ComparisonRow.to_dict(). The main table has at most 8 columns with
short headers, so that it fits a projector's page (1,216 px at 1280) without scrolling; the units and what a
header means are in UNITS_NOTE, written under the table. Counts are written with thousands separators
("1,234,567"). Columns no row has a value for (exact match of a language model, nats per character of a task) are
left out. The details table holds the rest.
"""
from __future__ import annotations

import pandas as pd


def thousands(value) -> str:
    """A count with thousands separators: 1234567 -> "1,234,567"."""
    return f"{int(round(value)):,}"


# (row key, header, how a value is written); None values stay empty cells
MAIN = [
    ("variant", "Variant", str),
    ("kv_cache_bytes_per_token", "KV cache", thousands),
    ("parameters", "Parameters", thousands),
    ("val_loss", "Val loss", lambda v: round(v, 3)),
    ("exact_match", "Exact %", lambda v: round(100 * v, 1)),
    ("nats_per_char", "Nats/char", lambda v: round(v, 3)),
    ("train_seconds", "Train s", lambda v: round(v, 1)),
    ("decode_tokens_per_sec", "Decode tok/s", thousands),
    ("mean_attended_distance", "Looks back", lambda v: round(v, 2)),
]
UNITS_NOTE = ("KV cache: bytes cached per generated token. Parameters: the model's weights, counted. Val loss: "
              "validation loss in nats per token. Exact %: outputs exactly right. Nats/char: validation loss per "
              "character. Train s: training time in seconds. Decode tok/s: generated tokens per second. Looks "
              "back: how many tokens back a head attends, on average.")
DETAILS = [
    ("variant", "Variant", str),
    ("n_heads", "Query heads", int),
    ("n_kv_heads", "KV heads", int),
    ("attention", "Attention", str),
    ("pos_encoding", "Positions", str),
    ("steps", "Steps", int),
    ("final_train_loss", "Final train loss (nats/token)", lambda v: round(v, 3)),
    ("train_tokens_per_sec", "Training (tokens/s)", thousands),
]
MAX_MAIN_COLUMNS = 8
TABLE_CHAR_PX = 10  # the widest character of the table's 16 px type (bold headers; the body's monospace is 9.6 px)
TABLE_CELL_PAD_PX = 40  # a cell's padding each side and its header's sort button
LONGEST_VALUE = {"variant": len("MHA (16 kv heads)")}  # characters; every other column's values are shorter than its header


def _table(rows: list[dict], columns) -> pd.DataFrame:
    present = [(key, header, fmt) for key, header, fmt in columns if any(r.get(key) is not None for r in rows)]
    if not rows:  # the headers a table of these columns will have (never gradio's "1 2 3")
        present = [c for c in columns if c[0] != "nats_per_char"]  # the table a task gives, whose widths are set
    data = [[None if r.get(key) is None else fmt(r[key]) for key, _, fmt in present] for r in rows]
    return pd.DataFrame(data, columns=[header for _, header, _ in present])


def column_widths() -> list[str]:
    """The main table's column widths for gradio's Dataframe, set once when the page is built (an update carrying
    them would reach an API client as an update, not a table): each column as wide as the longest header that can
    stand in its place (the fifth is "Exact %" for a task, "Nats/char" for a language model) and its longest value,
    in the table's type. Gradio sizes a column by its first row's values alone, so on a phone "KV cache" read "K..."."""
    columns = [c for c in MAIN if c[0] != "nats_per_char"]
    chars = [max(len(header), LONGEST_VALUE.get(key, 0)) for key, header, _ in columns]
    chars[[key for key, _, _ in columns].index("exact_match")] = max(len("Exact %"), len("Nats/char"))
    return [f"{TABLE_CHAR_PX * n + TABLE_CELL_PAD_PX}px" for n in chars]


def comparison_tables(rows: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(main table, details) of a comparison's rows; with no rows, two empty tables with their headers."""
    main = _table(rows, MAIN)
    if len(main.columns) > MAX_MAIN_COLUMNS:  # a task and a language model in one table: never the case here
        raise ValueError(f"the main comparison table would have {len(main.columns)} columns; at most "
                         f"{MAX_MAIN_COLUMNS} fit a projector")
    return main, _table(rows, DETAILS)
