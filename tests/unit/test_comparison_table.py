"""The comparison table as the page shows it: short headers, counts with separators, and every column as wide as any
header and value that can stand in it (gradio sizes a column by its first row alone: on a phone "KV cache" read
"K..."). The widths are set once when the page is built, so they must hold a task's table and a language model's."""
from visualize.comparison_table import TABLE_CELL_PAD_PX, TABLE_CHAR_PX, column_widths, comparison_tables

ROW = {"variant": "MQA (1 kv heads)", "kv_cache_bytes_per_token": 128, "parameters": 99456, "val_loss": 1.23456,
       "exact_match": 0.5, "train_seconds": 12.34, "decode_tokens_per_sec": 1234.5, "mean_attended_distance": 3.21}
LM_ROW = {**{k: v for k, v in ROW.items() if k != "exact_match"}, "variant": "MHA (16 kv heads)",
          "nats_per_char": 1.5, "parameters": 12345678}


def _px(width: str) -> int:
    return int(width.removesuffix("px"))


def test_every_column_holds_every_header_and_value_of_a_tasks_and_a_language_models_table():
    widths = [_px(w) for w in column_widths()]
    task, _ = comparison_tables([ROW, {**ROW, "variant": "MHA (4 kv heads)", "parameters": 117888}])
    lm, _ = comparison_tables([LM_ROW])
    assert list(task.columns) == ["Variant", "KV cache", "Parameters", "Val loss", "Exact %", "Train s",
                                  "Decode tok/s", "Looks back"]
    assert list(lm.columns) == [*task.columns[:4], "Nats/char", *task.columns[5:]]
    assert task["Parameters"].tolist() == ["99,456", "117,888"] and lm["Parameters"].tolist() == ["12,345,678"]
    for table in (task, lm):
        assert len(widths) == len(table.columns)
        for header, width in zip(table.columns, widths):
            longest = max(len(header), *(len(str(v)) for v in table[header]))
            assert width >= TABLE_CHAR_PX * longest + TABLE_CELL_PAD_PX, (header, width)
    assert widths[0] == TABLE_CHAR_PX * len("MHA (16 kv heads)") + TABLE_CELL_PAD_PX  # values longer than "Variant"
    assert sum(widths) <= 1216  # a projector's page at 1280 px holds the table without scrolling


def test_an_empty_table_has_the_columns_the_widths_are_for():
    main, _ = comparison_tables([])
    assert len(main.columns) == len(column_widths())
