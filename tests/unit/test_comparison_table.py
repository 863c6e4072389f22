"""The comparison table as the page shows it: short headers, counts with separators, and every column as wide as its
header and its longest value (gradio sizes a column by its first row alone: on a phone "KV cache" read "K...")."""
from visualize.comparison_table import TABLE_CELL_PAD_PX, TABLE_CHAR_PX, column_widths, comparison_tables

ROW = {"variant": "MQA (1 kv heads)", "kv_cache_bytes_per_token": 128, "parameters": 99456, "val_loss": 1.23456,
       "exact_match": 0.5, "train_seconds": 12.34, "decode_tokens_per_sec": 1234.5, "mean_attended_distance": 3.21}


def test_every_column_holds_its_header_and_its_longest_value():
    main, _ = comparison_tables([ROW, {**ROW, "variant": "MHA (4 kv heads)", "parameters": 117888}])
    widths = [int(w.removesuffix("px")) for w in column_widths(main)]
    assert list(main.columns) == ["Variant", "KV cache", "Parameters", "Val loss", "Exact %", "Train s",
                                  "Decode tok/s", "Looks back"]
    assert main["Parameters"].tolist() == ["99,456", "117,888"]
    for header, width in zip(main.columns, widths):
        longest = max(len(header), *(len(str(v)) for v in main[header]))
        assert width == TABLE_CHAR_PX * longest + TABLE_CELL_PAD_PX, header
    assert widths[0] == TABLE_CHAR_PX * len("MHA (4 kv heads)") + TABLE_CELL_PAD_PX  # a value longer than its header
    assert sum(widths) <= 1216  # a projector's page at 1280 px holds it without scrolling


def test_an_empty_table_is_sized_by_its_headers():
    main, _ = comparison_tables([])
    assert column_widths(main) == [f"{TABLE_CHAR_PX * len(h) + TABLE_CELL_PAD_PX}px" for h in main.columns]
