"""The app through its HTTP API (gradio_client), as a browser would drive it: every api_name answers, bad input
gets a clear error, and the next request still works."""
import json
import math
import re
import shutil

import pytest
from gradio_client.exceptions import AppError

from transformer import load_checkpoint
from transformer.data import TASKS
from transformer.generate import generate_text

from tests.app_server import streaming
from tests.chart_reader import pixel_tolerance, read_chart

GEN_DEFAULTS = dict(strategy="greedy", temperature=1.0, top_k=0, top_p=1.0, num_beams=4, max_new_tokens=40, seed=0)


def plot_json(value) -> dict:
    return json.loads(value["plot"])


def decode(array):
    """plotly 7 may send arrays as base64 typed arrays."""
    if isinstance(array, dict) and "bdata" in array:
        import base64

        import numpy as np

        shape = [int(n) for n in str(array.get("shape", "-1")).split(",")]
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"]).reshape(shape).tolist()
    return array


def generate(client, ckpt, prompt, **kw):
    return client.predict(ckpt, prompt, *{**GEN_DEFAULTS, **kw}.values(), api_name="/generate")


def test_generate_reverse_checkpoint_reverses(client):
    """The shipped reverse model writes its input backwards, and the step table lists one row per token."""
    text, table, *_ = generate(client, "reverse", "hello")
    assert text == "olleh"
    assert [row[1] for row in table["data"]] == [repr(c) for c in "olleh"]


def test_every_decoding_strategy_answers(client):
    """Greedy, sampling (with top-k/top-p) and beam search all return text through the API."""
    for kw in (dict(strategy="sample", temperature=0.7, top_k=5, top_p=0.9, seed=1), dict(strategy="beam")):
        text, *_ = generate(client, "reverse", "abc", **kw)
        assert text
    assert generate(client, "reverse", "abc", strategy="beam")[0] == "cba"


def test_example_gives_a_task_input(client):
    """One-click examples come from the checkpoint's task: reverse takes lowercase letters."""
    example = client.predict("reverse", api_name="/example")
    assert example and example.isalpha() and example.islower()


@pytest.mark.parametrize("prompt, message", [
    ("", "empty"),
    ("   ", "empty"),
    ("x" * 100_000, "limit"),
])
def test_bad_prompts_get_a_clear_error_and_the_next_call_works(client, prompt, message):
    """An empty prompt is the handler's error; one over its box's limit is refused before it is queued (a
    ValidationError, server.admission): either way the message says why."""
    with pytest.raises((AppError, ValueError), match=message):
        generate(client, "reverse", prompt)
    assert generate(client, "reverse", "ab")[0] == "ba"


def test_unknown_and_control_characters_are_reported_not_fatal(client):
    """Emoji and control characters become <unk>, and the notice says so."""
    text, table, _, notice = generate(client, "reverse", "ab😀\x07")
    assert "<unk>" in notice and "😀" in notice


def test_unknown_checkpoint_is_refused(client):
    with pytest.raises(AppError, match="not in the list of choices|unknown checkpoint"):
        generate(client, "no-such-model", "abc")


def test_attention_then_redraw_by_layer_and_head(client):
    """/attention computes the patterns once; /draw_attention redraws every figure for another layer and head,
    and the heatmap it draws is the head it names."""
    notice, heads, kind, layer, head, query = client.predict("reverse", "hello", "", api_name="/attention")
    assert kind["value"] == "cross" and layer["maximum"] >= 1 and head["maximum"] >= 1
    one, grid, overview, table = client.predict("cross", 1, 2, "anti-diagonal", api_name="/draw_attention")
    fig = plot_json(one)
    assert "layer 1, head 2" in fig["layout"]["title"]["text"]
    z = decode(fig["data"][0]["z"])
    rows = [sum(v for v in r if v is not None) for r in z]
    assert all(math.isclose(r, 1.0, abs_tol=1e-4) for r in rows), "every query row sums to 1"
    assert len(table["data"]) == (layer["maximum"] + 1) * (head["maximum"] + 1), "one row per layer and head"
    assert {"layer", "head", "entropy", "anti-diagonal", "previous token"} <= set(table["headers"])


def test_attention_download_is_made_only_when_asked_and_holds_the_weights(client):
    """No file is written by /attention; /export_attention writes the CSV and JSON, whose cross-attention has
    the source tokens on its keys and rows that sum to 1."""
    client.predict("reverse", "abcd", "", api_name="/attention")
    files = client.predict(api_name="/export_attention")
    data = json.loads(open(next(f for f in files if f.endswith(".json"))).read())
    cross = data["patterns"]["cross"]
    assert cross["key_tokens"] == ["a", "b", "c", "d", "</s>"]
    assert all(math.isclose(sum(row), 1.0, abs_tol=1e-3) for layer in cross["weights"] for head in layer
               for row in head)


def test_attention_truncates_long_input_with_a_notice_of_the_true_length(client):
    """Regression: the notice said "cut to 64" when the reverse model reads 21 tokens."""
    notice, *_ = client.predict("reverse", "abc" * 100, "", api_name="/attention")
    assert "has 300 tokens" in notice and "cut to its first 21" in notice


def test_positional_and_model_endpoints(client):
    matrix, waves, similarity, compare, note = client.predict(64, 50, "0, 1, 8", "reverse", api_name="/positional")
    fig = plot_json(matrix)
    assert len(decode(fig["data"][0]["z"])) == 50
    assert len([t for t in plot_json(waves)["data"] if t.get("name")]) == 3
    *_, note = client.predict(64, 50, "0, 99", "reverse", api_name="/positional")
    assert "99 does not exist" in note
    with pytest.raises(AppError, match="dimensions"):
        client.predict(64, 50, "99, 100", "reverse", api_name="/positional")
    summary, params, plot, kv = client.predict("reverse", api_name="/model")
    assert "parameters" in summary
    assert [row[0] for row in kv["data"]][0].startswith("MHA")


def test_stop_before_start_says_so_in_words_and_is_harmless(client):
    """Regression (issue 29, item 3): Stop with nothing training raised gr.Error in a queue=False event, which the
    page showed as a bare red "Error" (HTTP 500). Now its answer is the status line's text, every time."""
    for _ in range(2):
        assert "Nothing is training in this tab" in client.predict(api_name="/stop")
    assert generate(client, "reverse", "ab")[0] == "ba"


TRAIN_DEFAULTS = dict(source="task", task="reverse", text="", upload=None, hub="", layers=1, heads=4, d_model=64,
                      lr=3e-3, steps=80, batch=32)


def test_training_streams_updates_and_loss_falls(client, tmp_path):
    """The streaming /train endpoint sends several updates; the train loss of the last is below the first; the
    model joins this session's checkpoint list and downloads as a zip only when asked; /generate with it answers
    exactly what the library answers with the downloaded checkpoint (the session really uses its own model)."""
    job = client.submit(*TRAIN_DEFAULTS.values(), api_name="/train")
    updates = list(job)
    assert len(updates) >= 3
    chart = updates[-1][0]
    losses = read_chart(chart)["curves"]["train loss"]
    assert losses["y"][-1] < losses["y"][0] - 0.3
    status, ckpt = updates[-1][1], updates[-1][4]
    # the chart's last point is the run's last step and its loss, as the status line says them
    dx, dy = pixel_tolerance(chart)
    assert losses["x"][-1] == pytest.approx(TRAIN_DEFAULTS["steps"], abs=dx)
    assert losses["y"][-1] == pytest.approx(float(re.search(r"· loss ([\d.]+)", status).group(1)), abs=dy + 5e-4)
    assert "finished" in status
    mine = [c[0] for c in ckpt["choices"] if c[0].startswith("my reverse")]
    assert mine == ["my reverse model #1"], "the trained model joins the list"
    archive = client.predict(mine[0], api_name="/download_model")
    assert archive.endswith(".zip")
    shutil.unpack_archive(archive, tmp_path)
    model, tokenizer, info = load_checkpoint(next(p for p in tmp_path.iterdir() if p.is_dir()), device="cpu")
    assert info["task"] == "reverse"
    for source in ("abc", "attention"):
        text, *_ = generate(client, mine[0], source)  # this session uses its own model
        assert text == generate_text(model, tokenizer, source, GEN_DEFAULTS["max_new_tokens"])
    with pytest.raises(AppError, match="select a model you trained"):
        client.predict("reverse", api_name="/download_model")


@pytest.mark.parametrize("field, value, message", [
    ("steps", 1_000_000, r"Steps \(10-5000\) must be at most 5000"),  # the box's name (issue 37: gradio's
    ("layers", 0, r"Layers \(1-4\) must be at least 1"),  # own "greater than maximum value" named none)
    ("d_model", 62, "divisible"),
    ("lr", 5.0, "Peak learning rate .* must be at most"),
    ("source", "text", "paste some text"),
])
def test_bad_training_requests_are_refused(client, field, value, message):
    with pytest.raises(AppError, match=message):
        client.predict(*{**TRAIN_DEFAULTS, field: value}.values(), api_name="/train")
    assert generate(client, "reverse", "ab")[0] == "ba"


def test_binary_upload_is_refused(client, tmp_path):
    from gradio_client import handle_file

    binary = tmp_path / "weights.txt"
    binary.write_bytes(bytes(range(256)) * 40)
    with pytest.raises(AppError, match="not a"):
        client.predict(*{**TRAIN_DEFAULTS, "source": "text", "upload": handle_file(str(binary))}.values(),
                       api_name="/train")


def test_qk_step_equals_the_heatmap_row(client):
    """Oracle: the softmax bars of the Q·K view are the heatmap's row for that query, to 1e-6; masked keys (decoder
    self-attention) are marked and get weight 0."""
    client.predict("shakespeare-char", "To be, or not", "", api_name="/attention")
    one, *_ = client.predict("decoder self", 3, 2, "entropy", api_name="/draw_attention")
    row = decode(plot_json(one)["data"][0]["z"])[5]
    qk = plot_json(client.predict("decoder self", 3, 2, 5, api_name="/draw_qk"))
    bars = decode(qk["data"][2]["y"])
    row = [0.0 if b is None or math.isnan(b) else b for b in row]  # masked cells are drawn as a grey layer
    assert all(math.isclose(a, b, abs_tol=1e-6) for a, b in zip(bars, row))
    assert qk["data"][2]["text"][6] == "masked" and bars[6] == 0.0 and qk["data"][2]["text"][5] == ""


def test_rollout_rows_sum_to_one(client):
    client.predict("shakespeare-char", "To be, or not", "", api_name="/attention")
    z = decode(plot_json(client.predict("decoder self", api_name="/draw_rollout"))["data"][0]["z"])
    assert all(math.isclose(sum(r), 1.0, abs_tol=1e-4) for r in z)


def test_switching_the_anti_diagonal_heads_off_breaks_reverse(client):
    """The ablation view: with the reverse model's last-layer anti-diagonal heads off, its output changes and its
    exact match on 100 fresh examples drops below 0.5 (1.0 with every head on)."""
    client.predict("reverse", "attention", "", api_name="/attention")
    table = client.predict("cross", ["1.0", "1.2", "1.3"], api_name="/ablate")
    on, off = table["data"]
    assert on[1] == "noitnetta" and on[2] == 1.0
    assert off[1] != "noitnetta" and off[2] < 0.5
    with pytest.raises(AppError, match="heads to switch off: there is no head 9.9"):
        client.predict("cross", ["9.9"], api_name="/ablate")


def _count(text: str) -> int:
    """A count the comparison table writes with thousands separators ("1,234"), as a number."""
    return int(text.replace(",", ""))


def test_mha_gqa_mqa_comparison_streams_three_curves_and_a_table(client):
    """One action trains the same model with 4, 2 and 1 key/value heads: three curves on one plot, and a table
    whose KV-cache bytes per token are in ratio 4 : 2 : 1 with fewer parameters each time."""
    job = client.submit(*{**TRAIN_DEFAULTS, "steps": 20, "d_model": 32}.values(), "kv-heads",
                        api_name="/compare_variants")
    updates = list(job)
    figure, status, table, details = updates[-1]
    curves = read_chart(figure)["curves"]
    names = list(curves)
    assert names == ["MHA (4 kv heads)", "GQA (2 kv heads)", "MQA (1 kv heads)"] and "Done" in status
    dx, _ = pixel_tolerance(figure)
    assert all(c["x"][-1] == pytest.approx(20, abs=dx) for c in curves.values()), "every variant trained 20 steps"
    rows = {row[0]: dict(zip(table["headers"], row)) for row in table["data"]}
    assert list(rows) == names, "the table names the variants as the plot's legend does"
    kv = [_count(rows[v]["KV cache"]) for v in names]
    assert kv[0] == 2 * kv[1] == 4 * kv[2]
    params = [_count(rows[v]["Parameters"]) for v in names]
    assert params[0] > params[1] > params[2]
    assert 0 <= rows[names[0]]["Exact %"] <= 100
    assert [row[2] for row in details["data"]] == [4, 2, 1] and details["headers"][2] == "KV heads"


def test_comparison_of_every_variant_reports_mla_and_position_rows(client):
    """"all" trains MHA, GQA, MQA, MLA and MHA with learned, RoPE and ALiBi positions: one curve each, and a table
    whose MLA row caches kv_latent_dim numbers per layer (4 d_k by default) and whose position rows name their
    scheme; a comparison name the app does not offer is refused."""
    from transformer import TransformerConfig
    from transformer.generate import cache_bytes_per_token

    job = client.submit(*{**TRAIN_DEFAULTS, "steps": 10, "d_model": 32}.values(), "all", api_name="/compare_variants")
    figure, status, table, details = list(job)[-1]
    assert list(read_chart(figure)["curves"]) == [
        "MHA (4 kv heads)", "GQA (2 kv heads)", "MQA (1 kv heads)", "MLA", "learned", "RoPE", "ALiBi"]
    rows = {row[0]: dict(zip(table["headers"], row)) for row in table["data"]}
    layers = TRAIN_DEFAULTS["layers"]
    mla = TransformerConfig(vocab_size=20, d_model=32, n_heads=4, n_decoder_layers=layers, attention="mla")
    assert _count(rows["MLA"]["KV cache"]) == cache_bytes_per_token(mla) == layers * 4 * 8 * 4
    positions = {row[0]: dict(zip(details["headers"], row))["Positions"] for row in details["data"]}
    assert [positions[v] for v in ("learned", "RoPE", "ALiBi")] == ["learned", "rope", "alibi"]
    assert len(table["headers"]) <= 8 and "Nats/char" not in table["headers"], "no empty column for a task"
    # decoder self-attention is causal: text query t (after <s>) looks at most t back, so the mean distance over a
    # target of m letters is at most (m + 1) / 2, and above 0 (softmax leaves weight on <s>, t positions back)
    longest = TASKS[TRAIN_DEFAULTS["task"]].max_target_len
    assert all(0 < rows[v]["Looks back"] <= (longest + 1) / 2 for v in rows)
    with pytest.raises(AppError, match="Variants to compare must be one of"):
        client.predict(*TRAIN_DEFAULTS.values(), "everything", api_name="/compare_variants")


def test_stop_during_a_comparison_stops_it_without_an_error(client):
    """Regression (issue 19): Stop during "Compare variants" answered "Nothing is training in this tab", the
    status froze, the table kept nothing and the server logged a traceback. Now Stop is accepted and the
    comparison ends with "Comparison stopped" and the curves as far as they got."""
    job = client.submit(*{**TRAIN_DEFAULTS, "steps": 1500, "d_model": 32}.values(), "kv-heads",
                        api_name="/compare_variants")
    streaming(job, 2)
    client.predict(api_name="/stop")  # no AppError: the comparison's own Stop signal is set
    figure, status, table, details = job.result()  # the last update, once the comparison has ended
    assert "Comparison stopped" in status, status
    assert any(len(c["x"]) for c in read_chart(figure)["curves"].values()), "the partial curve is kept"
