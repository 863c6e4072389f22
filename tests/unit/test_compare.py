"""transformer.train.compare: MHA vs GQA vs MQA trained side by side on the same data, steps and seed."""
from __future__ import annotations

import json
import math
import random
from dataclasses import replace

import pytest
import torch

from transformer.train.cli import main as cli_main
from transformer.train.compare import (ComparisonSetup, Variant, build_variant, compare_variants, comparison_variants,
                                 gqa_skip_note, kv_head_variants, markdown_table, rewound)
from transformer.config import TransformerConfig
from transformer.data import TASKS, TaskData, TextData, split_text
from transformer.interpretability.head_metrics import mean_attended_distance
from transformer.tokenization import CharTokenizer
from transformer.train import TrainConfig

STEPS = 12
TASK = TASKS["reverse"]
TOKENIZER = CharTokenizer(TASK.alphabet)


class RecordingTaskData(TaskData):
    """TaskData that keeps every training batch it serves."""

    def __init__(self, *args):
        super().__init__(*args)
        self.batches = []

    def train_batch(self, batch_size):
        (src, tgt_in), tgt_out = super().train_batch(batch_size)
        self.batches.append((src, tgt_in, tgt_out))
        return (src, tgt_in), tgt_out


def task_setup(n_heads=4, d_model=16, make_data=None) -> ComparisonSetup:
    config = TransformerConfig(vocab_size=TOKENIZER.vocab_size, d_model=d_model, n_heads=n_heads, n_encoder_layers=1,
                               n_decoder_layers=2, d_ff=32, dropout=0.0, max_len=22)
    train_cfg = TrainConfig(steps=STEPS, batch_size=8, schedule="constant", lr=1e-3, warmup=0, eval_every=6,
                            eval_examples=8, seed=3)
    make_data = make_data or (lambda: RecordingTaskData(TASK, TOKENIZER, config, train_cfg.seed, 8))
    return ComparisonSetup(config, TOKENIZER, train_cfg, make_data, attended_distance=mean_attended_distance)


def run(setup, **kw) -> list:
    return list(compare_variants(setup, decode_tokens=6, speed_rounds=1, **kw))


@pytest.fixture(scope="module")
def recorded():
    """One comparison of a 4-head model, with every data source it made."""
    sources = []

    def make_data():
        sources.append(RecordingTaskData(TASK, TOKENIZER, setup.config, setup.train_cfg.seed, 8))
        return sources[-1]

    setup = task_setup(make_data=make_data)
    return setup, run(setup), sources


def rows_of(events):
    return [e for e in events if e.kind == "row"]


def test_three_variants_mha_a_divisor_and_mqa(recorded):
    """Invariant: the default variants are n_kv_heads = H (MHA), a divisor strictly between 1 and H (GQA) and 1
    (MQA), in that order, for the plan, the training runs and the table alike."""
    _, events, _ = recorded
    assert kv_head_variants(4) == [Variant("MHA", 4), Variant("GQA", 2), Variant("MQA", 1)]
    for h in (4, 6, 8, 9, 12):
        mha, gqa, mqa = kv_head_variants(h)
        assert (mha.n_kv_heads, mqa.n_kv_heads) == (h, 1) and 1 < gqa.n_kv_heads < h and h % gqa.n_kv_heads == 0
    assert events[0].kind == "plan" and events[0].variants == kv_head_variants(4) and events[0].note is None
    assert [(r.variant, r.n_kv_heads) for r in rows_of(events)] == [("MHA", 4), ("GQA", 2), ("MQA", 1)]
    assert kv_head_variants(8, gqa_kv_heads=2)[1] == Variant("GQA", 2)


def test_every_variant_trains_on_the_same_batches(recorded):
    """Invariant (same data): each variant gets a fresh data source and draws the identical batches, first to
    last, so the loss curves differ only by the model."""
    _, _, sources = recorded
    assert len(sources) == 3 and all(len(s.batches) == STEPS for s in sources)
    for other in sources[1:]:
        for mine, theirs in zip(sources[0].batches, other.batches):
            assert all(torch.equal(a, b) for a, b in zip(mine, theirs))


def test_rewound_data_source_serves_each_variant_the_same_batches():
    """Invariant: the CLI's `rewound(data)` hands one source back rewound before each variant, so it serves the
    same batches to each, as fresh sources would."""
    setup = task_setup()
    data = setup.make_data()
    run(ComparisonSetup(setup.config, TOKENIZER, setup.train_cfg, rewound(data), attended_distance=mean_attended_distance))
    thirds = [data.batches[i * STEPS:(i + 1) * STEPS] for i in range(3)]
    assert len(data.batches) == 3 * STEPS
    for other in thirds[1:]:
        assert all(torch.equal(a[0], b[0]) and torch.equal(a[2], b[2]) for a, b in zip(thirds[0], other))


def test_every_variant_starts_from_the_same_random_stream():
    """Invariant (same seed): torch is seeded with train_cfg.seed right before each model is built, so a variant's
    initial weights do not depend on which variants were built before it (MHA built after MQA equals MHA built
    first), while another seed gives other weights."""
    setup, mha, mqa = task_setup(), Variant("MHA", 4), Variant("MQA", 1)
    first = build_variant(setup, mha)[0].state_dict()
    build_variant(setup, mqa)
    torch.rand(7)  # anything else drawing from torch's generator in between
    again = build_variant(setup, mha)[0].state_dict()
    assert all(torch.equal(first[k], again[k]) for k in first)
    other_seed = replace(setup, train_cfg=replace(setup.train_cfg, seed=4))
    assert not torch.equal(first["embed.weight"], build_variant(other_seed, mha)[0].state_dict()["embed.weight"])


def test_kv_cache_bytes_per_token_are_in_ratio_h_g_1(recorded):
    """Oracle (by hand): the decoder's self-attention cache holds K and V, n_kv_heads x d_k floats each, per layer:
    2 layers x 2 x G x (16 / 4) x 4 bytes = 64 G bytes, so H : G : 1 = 256 : 128 : 64."""
    rows = rows_of(recorded[1])
    assert [r.kv_cache_bytes_per_token for r in rows] == [256, 128, 64]


def test_parameters_fall_by_exactly_the_key_and_value_projections(recorded):
    """Oracle (by hand): every attention module (1 encoder self, 2 decoder self, 2 cross) has W^K and W^V of
    d_model x (G d_k) weights (no biases, as in the paper), so each key/value head fewer removes 5 x 2 x 16 x 4 =
    640 parameters: MHA > GQA by 2 x 640, GQA > MQA by 1 x 640."""
    mha, gqa, mqa = (r.parameters for r in rows_of(recorded[1]))
    assert mha - gqa == 2 * 640 and gqa - mqa == 1 * 640


def test_every_row_has_finite_metrics(recorded):
    """Invariant: every variant trained all its steps and reports a finite loss, an exact match in [0, 1] (seq2seq,
    so no nats per character) and a positive decoding speed; the table has a line per row."""
    rows = rows_of(recorded[1])
    for r in rows:
        assert r.steps == STEPS and math.isfinite(r.final_train_loss) and math.isfinite(r.val_loss)
        assert 0 <= r.exact_match <= 1 and r.nats_per_char is None and r.decode_tokens_per_sec > 0
    table = markdown_table(rows).splitlines()
    assert len(table) == 2 + len(rows) and "exact match" in table[0] and "0.25x" in table[-1]


def test_event_stream_names_each_variant_with_increasing_steps(recorded):
    """Invariant: a plan comes first and the rows last; in between every training event names its variant, the
    variants run one after the other, and each one's steps go 1, 2, ..., STEPS with evaluations at 6 and 12."""
    events = recorded[1]
    kinds = [e.kind for e in events]
    assert kinds[0] == "plan" and kinds[-3:] == ["row"] * 3 and set(kinds[1:-3]) == {"train"}
    train = [e for e in events if e.kind == "train"]
    order = [e.variant.name for e in train]
    assert order == sorted(order, key=["MHA", "GQA", "MQA"].index)
    for name in ("MHA", "GQA", "MQA"):
        mine = [e.event for e in train if e.variant.name == name]
        assert [e.step for e in mine if e.kind == "step"] == list(range(1, STEPS + 1))
        assert [e.step for e in mine if e.kind == "eval"] == [6, 12]


def test_prime_n_heads_skips_gqa_with_a_clear_message():
    """Invariant: 3 heads have no divisor strictly between 1 and 3, so only MHA and MQA train, and the plan says
    GQA was skipped and why; 1 head leaves a single variant."""
    assert kv_head_variants(3) == [Variant("MHA", 3), Variant("MQA", 1)]
    assert kv_head_variants(1) == [Variant("MHA", 1)]
    events = run(task_setup(n_heads=3, d_model=12))
    assert "GQA skipped" in events[0].note and "prime" in events[0].note
    assert [r.variant for r in rows_of(events)] == ["MHA", "MQA"]
    assert "same model" in gqa_skip_note(1)
    assert gqa_skip_note(4) is None


@pytest.mark.parametrize("gqa", [1, 3, 4])
def test_a_gqa_value_that_is_not_a_proper_divisor_is_refused(gqa):
    """Invariant: GQA's n_kv_heads must divide n_heads and lie strictly between 1 and n_heads; else a ValueError
    naming n_kv_heads and the values allowed."""
    with pytest.raises(ValueError, match=r"n_kv_heads.*\(2\)"):
        kv_head_variants(4, gqa_kv_heads=gqa)


def test_text_comparison_reports_nats_per_character():
    """Invariant: a language-model comparison reports finite nats per character on the validation text (no exact
    match), for each variant."""
    text = "".join(TASK.sample(random.Random(i))[0] + " " for i in range(400))
    train_text, val_text = split_text(text)
    tok = CharTokenizer.from_text(train_text)
    config = TransformerConfig(arch="decoder-only", vocab_size=tok.vocab_size, d_model=16, n_heads=4,
                               n_decoder_layers=1, d_ff=32, dropout=0.0, max_len=16, norm_first=True)
    train_cfg = TrainConfig(steps=4, batch_size=4, block_size=16, schedule="constant", lr=1e-3, warmup=0,
                            eval_every=4, eval_examples=4)
    setup = ComparisonSetup(config, tok, train_cfg, lambda: TextData(train_text, val_text, tok, 16, 0, 4), val_text)
    rows = rows_of(run(setup))
    assert [r.variant for r in rows] == ["MHA", "GQA", "MQA"]
    assert all(r.exact_match is None and math.isfinite(r.nats_per_char) for r in rows)


CLI_TINY = ["--task", "reverse", "--compare-kv-heads", "--threads", "1", "--d-model", "16", "--n-encoder-layers",
            "1", "--n-decoder-layers", "1", "--d-ff", "32", "--steps", "3", "--batch-size", "4", "--eval-every", "3",
            "--eval-examples", "4", "--schedule", "constant", "--lr", "1e-3", "--warmup", "0"]


def test_cli_writes_the_table_as_json_next_to_out(tmp_path, capsys):
    """Invariant: `--compare-kv-heads` prints the table and writes <out>.json with one row per variant (MHA, the
    --n-kv-heads GQA, MQA) and the exact command; a prime n_heads says GQA is skipped; a bad GQA value exits."""
    out = tmp_path / "compare"
    assert cli_main(CLI_TINY + ["--n-heads", "4", "--out", str(out)]) == 0
    result = json.loads((tmp_path / "compare.json").read_text())
    assert [r["n_kv_heads"] for r in result["rows"]] == [4, 2, 1]
    printed = capsys.readouterr()
    assert result["command"].endswith(f"--out {out}")
    assert "| MHA | 4 kv heads of 4 | sinusoidal |" in printed.out + printed.err
    assert cli_main(CLI_TINY + ["--n-heads", "2", "--out", str(tmp_path / "prime")]) == 0
    printed = capsys.readouterr()
    assert "GQA skipped" in printed.out + printed.err
    with pytest.raises(SystemExit, match="n_kv_heads"):
        cli_main(CLI_TINY + ["--n-heads", "4", "--n-kv-heads", "4", "--out", str(tmp_path / "bad")])


def test_named_comparisons_list_their_variants():
    """Invariant: "attention" adds MLA to MHA/GQA/MQA; "positions" is MHA with each scheme; "all" is both, the
    base's own scheme appearing once (as the MHA row); each variant's config has exactly its fields changed."""
    base = task_setup().config
    assert [v.name for v in comparison_variants("attention", base)] == ["MHA", "GQA", "MQA", "MLA"]
    assert [v.name for v in comparison_variants("positions", base)] == ["sinusoidal", "learned", "RoPE", "ALiBi"]
    assert [v.name for v in comparison_variants("all", base)] == ["MHA", "GQA", "MQA", "MLA", "learned", "RoPE",
                                                                   "ALiBi"]
    mla = Variant("MLA", attention="mla").config(base)
    assert (mla.attention, mla.n_kv_heads, mla.kv_latent_dim) == ("mla", 4, 4 * base.d_k)
    rope = Variant("RoPE", pos_encoding="rope").config(base)
    assert rope.to_dict() == {**base.to_dict(), "pos_encoding": "rope"}
    with pytest.raises(ValueError, match="comparison"):
        comparison_variants("everything", base)


def test_attention_and_position_variants_train_and_report_true_figures():
    """Behaviour: MLA, RoPE and ALiBi train side by side with MHA; each row's KV-cache bytes are the formula's for
    that variant, and its mean attended distance is what a fresh recording of its heads gives."""
    from transformer.generate import cache_bytes_per_token

    setup = task_setup()
    variants = [Variant("MHA", 4), Variant("MLA", attention="mla", kv_latent_dim=8),
                Variant("RoPE", pos_encoding="rope"), Variant("ALiBi", pos_encoding="alibi")]
    events = run(setup, variants=variants)
    assert events[0].note is None  # nothing skipped
    rows = rows_of(events)
    assert [(r.variant, r.attention, r.pos_encoding) for r in rows] == [
        ("MHA", "mha", "sinusoidal"), ("MLA", "mla", "sinusoidal"), ("RoPE", "mha", "rope"), ("ALiBi", "mha", "alibi")]
    for row, variant in zip(rows, variants):
        config = variant.config(setup.config)
        assert row.kv_cache_bytes_per_token == cache_bytes_per_token(config)
        model, data = build_variant(setup, variant)
        assert row.parameters == sum(p.numel() for p in model.parameters())
        # causal decoder self-attention: text query t looks at most t back, so over targets of at most m letters
        # the mean distance is at most (m + 1) / 2; softmax leaves weight on <s>, so it is above 0
        assert row.train_tokens_per_sec > 0 and 0 < row.mean_attended_distance <= (TASK.max_target_len + 1) / 2
    assert rows[1].kv_cache_bytes_per_token == 2 * 8 * 4  # 2 layers x latent 8 x 4 bytes
    # the figure is true: recompute it on a model trained the same way (same seed, same batches)
    again = rows_of(run(setup, variants=[variants[3]]))[0]
    assert again.mean_attended_distance == pytest.approx(rows[3].mean_attended_distance, abs=1e-6)
    assert again.val_loss == pytest.approx(rows[3].val_loss, abs=1e-6)


def test_mean_attended_distance_is_the_hand_computed_mean_over_text_queries():
    """Oracle: mean_attended_distance of a small untrained model equals the mean, computed here from the model's
    own decoder self-attention weights, over examples, layers, heads and text queries t (dec_in positions 1..m) of
    sum_s w[t, s] |t - s|; the distance a heatmap of the comparison reports is that number."""
    from transformer.encoding import pair_batch
    from transformer.model import Transformer

    setup = task_setup()
    torch.manual_seed(0)
    model = Transformer(setup.config).eval()
    data = setup.make_data()
    per_example = []
    for source, target in data.val_pairs[:4]:
        src, tgt_in, _ = pair_batch(TOKENIZER, [(source, target)], model.config)
        with torch.no_grad():
            maps = model(src, tgt_in, return_attention=True).attention.decoder_self  # L x (1, H, T, T)
        T = tgt_in.size(1)
        total, count = 0.0, 0
        for layer in maps:
            for head in layer[0]:
                for t in range(1, T):
                    total += sum(float(head[t, s]) * abs(t - s) for s in range(T)) / (T - 1)
                count += 1
        per_example.append(total / count)
    assert mean_attended_distance(model, data, TOKENIZER, n_examples=4) == pytest.approx(
        sum(per_example) / len(per_example), rel=1e-5)


def test_stop_ends_the_comparison_with_rows_for_the_variants_already_trained(recorded):
    """Stop in the middle of the second variant: its events up to the stop were yielded and it gets no row; the
    first variant gets its row, and that row equals the uninterrupted comparison's (same data, steps and seed)."""
    setup, full, _ = recorded
    seen = []

    def stop():
        return len(seen) >= 1 and seen[-1].variant.name == "GQA" and seen[-1].event.step == 5

    events = []
    for event in compare_variants(setup, decode_tokens=6, speed_rounds=1, stop=stop):
        events.append(event)
        if event.kind == "train" and event.event.kind == "step":
            seen.append(event)
    trained = [(e.variant.name, e.event.step) for e in events if e.kind == "train" and e.event.kind == "step"]
    assert trained == [("MHA", s) for s in range(1, STEPS + 1)] + [("GQA", s) for s in range(1, 6)]
    (row,) = rows_of(events)
    reference = rows_of(full)[0]
    assert (row.variant, row.steps, row.final_train_loss, row.val_loss, row.parameters) == \
        (reference.variant, reference.steps, reference.final_train_loss, reference.val_loss, reference.parameters)


def test_stop_during_the_first_variant_yields_no_row():
    setup = task_setup()
    events = list(compare_variants(setup, decode_tokens=6, speed_rounds=1, stop=lambda: True))
    assert [e.kind for e in events] == ["plan", "train"] and not rows_of(events)


def test_block_variants_compare_layernorm_rmsnorm_and_swiglu_at_about_equal_size():
    """Behaviour and invariant: "blocks" trains the paper's LayerNorm + FFN, RMSNorm, SwiGLU and both side by side;
    each row reports its norm and feed-forward, and each model is built from them (RMSNorm modules, three FFN
    matrices); SwiGLU at 2/3 of d_ff keeps the feed-forward's weight count that of the two-matrix FFN up to the
    rounding of 2/3 d_ff (half a unit, three d_model-wide matrices per layer), and RMSNorm has exactly the LayerNorm
    biases fewer."""
    from transformer.gated_feedforward import SwiGLU
    from transformer.norms import RMSNorm

    setup = task_setup()
    variants = comparison_variants("blocks", setup.config)
    assert [v.name for v in variants] == ["LayerNorm", "RMSNorm", "SwiGLU", "RMSNorm + SwiGLU"]
    rows = rows_of(run(setup, variants=variants))
    assert [(r.variant, r.norm, r.ffn) for r in rows] == [
        ("LayerNorm", "layer", "standard"), ("RMSNorm", "rms", "standard"), ("SwiGLU", "layer", "swiglu"),
        ("RMSNorm + SwiGLU", "rms", "swiglu")]
    models = [build_variant(setup, v)[0] for v in variants]
    assert any(isinstance(m, RMSNorm) for m in models[3].modules())
    assert not any(isinstance(m, RMSNorm) for m in models[2].modules())
    assert any(isinstance(m, SwiGLU) for m in models[2].modules())
    cfg = setup.config
    n_norms = sum(isinstance(m, torch.nn.LayerNorm) for m in models[0].modules())
    assert rows[0].parameters - rows[1].parameters == n_norms * cfg.d_model
    ffn = lambda m: sum(p.numel() for n, p in m.named_parameters() if ".ffn." in n and n.endswith("weight"))  # noqa
    layers = cfg.n_encoder_layers + cfg.n_decoder_layers
    assert abs(ffn(models[2]) - ffn(models[0])) <= 1.5 * cfg.d_model * layers
    assert all(math.isfinite(r.val_loss) for r in rows)
