"""The Attention tab's download: a record's weights as a long CSV and as JSON."""
from __future__ import annotations

import json

import gradio as gr
import pandas as pd
import torch

from checks import UserError
from store.exports import EXPORTS
from widgets.errors import handler


@handler
def export_attention(record, request: gr.Request = None) -> list[str]:
    """The weights as a long CSV (one row per weight) and as JSON, written only when asked, into a bounded folder
    that serves them only to this browser."""
    if record is None:
        raise UserError("press Show attention first")
    rows, data = [], {"patterns": {}}
    for kind, pattern in record.patterns.items():
        data["patterns"][kind] = {"query_tokens": pattern.query_tokens, "key_tokens": pattern.key_tokens,
                                  "weights": pattern.weights.numpy().round(5).tolist()}
        for (layer, head, q, k), w in zip(torch.cartesian_prod(*(torch.arange(n) for n in pattern.weights.shape)
                                                               ).tolist(), pattern.weights.flatten().tolist()):
            rows.append((kind, layer, head, q, pattern.query_tokens[q], k, pattern.key_tokens[k], round(w, 6)))
    folder = EXPORTS.new(request)
    pd.DataFrame(rows, columns=["kind", "layer", "head", "query_pos", "query_token", "key_pos", "key_token",
                                "weight"]).to_csv(folder / "attention.csv", index=False)
    (folder / "attention.json").write_text(json.dumps(data))
    return [str(folder / "attention.csv"), str(folder / "attention.json")]
