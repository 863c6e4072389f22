"""End to end: train a small reverse model (the Trainer learns it: its stream and its evaluations), save it, load it
back, generate with it; and the same through the CLI. Every test of the shared reverse run (tests/conftest.py
reverse_run) is in this file: a session fixture is built once per xdist worker, and a file runs on one worker."""
from __future__ import annotations

import json
import math
import random

import pytest
import torch

from tests.conftest import REVERSE_ACCURACY, REVERSE_STEPS
from transformer.checkpoint import load_checkpoint
from transformer.train.cli import main as cli_main
from transformer.data import TASKS, TaskData
from transformer.encoding import source_batch
from transformer.evaluate import exact_match
from transformer.generate import generate, generate_text, greedy_batch
from transformer.train import EvalEvent, StepEvent


# --- learning -------------------------------------------------------------------------------------------------


def test_trainer_learns_reverse(reverse_run):
    """Invariant (a real learning test): 300 steps of a d_model-64, 2+2-layer model on `reverse` reach a validation
    token accuracy of at least 0.85 (measured 0.89-0.97 over seeds 0-5) and far lower loss than at the start; the
    stream has one StepEvent per step and an EvalEvent every eval_every steps."""
    steps = [e for e in reverse_run.events if isinstance(e, StepEvent)]
    evals = [e for e in reverse_run.events if isinstance(e, EvalEvent)]
    assert [e.step for e in steps] == list(range(1, REVERSE_STEPS + 1))
    assert [e.step for e in evals] == [150, 300]
    final = evals[-1]
    assert final.token_accuracy >= REVERSE_ACCURACY, final.token_accuracy
    assert final.val_loss < evals[0].val_loss
    first, last = (sum(e.loss for e in steps[i: i + 20]) / 20 for i in (0, REVERSE_STEPS - 20))
    assert last < first / 5
    assert math.log(reverse_run.tokenizer.vocab_size) == pytest.approx(steps[0].loss, rel=0.25)  # starts near chance


def test_eval_event_attention_is_the_probes_cross_attention(reverse_run):
    """Invariant: the EvalEvent's attention is a cross-attention pattern of the first validation example (kind,
    axis labels and weights as transformer.interpretability.probe records it): rows sum to 1, one label per query
    and key, and the same weights as a fresh probe of the same example."""
    from transformer.interpretability.probe import record_ids

    final = [e for e in reverse_run.events if isinstance(e, EvalEvent)][-1]
    pattern = final.attention
    assert pattern.kind == "cross"
    weights = pattern.weights  # (L, H, T, S)
    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:3]), atol=1e-5, rtol=0)
    assert (len(pattern.query_tokens), len(pattern.key_tokens)) == tuple(weights.shape[2:])
    source, expected, output = final.samples[0]
    assert expected == source[::-1]
    assert pattern.key_tokens == list(source) + ["</s>"] and pattern.query_tokens == list(expected) + ["</s>"]
    model, tok = reverse_run.model.eval(), reverse_run.tokenizer  # the last evaluation is at the last step
    fresh = record_ids(model, tok, tok.encode(source) + [2], tok.encode(expected)).patterns["cross"]
    torch.testing.assert_close(weights, fresh.weights, atol=1e-6, rtol=0)


# --- the saved checkpoint -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def loaded(reverse_run):
    return load_checkpoint(reverse_run.out_dir, device="cpu")


def test_the_checkpoint_is_the_trained_model(reverse_run, loaded):
    """Invariant: the loaded checkpoint computes exactly the trained model's logits, with the same tokenizer, and
    its config.json records the task and the training run."""
    model, tokenizer, info = loaded
    assert info["task"] == "reverse" and info["training"]["steps"] == reverse_run.train_cfg.steps
    assert info["model"] == reverse_run.model.config.to_dict()
    assert tokenizer.encode("hello") == reverse_run.tokenizer.encode("hello")
    src = torch.tensor([tokenizer.encode("abcdefg") + [2]])
    tgt = torch.tensor([[1] + tokenizer.encode("gfedcba")])
    with torch.no_grad():
        assert torch.equal(model(src, tgt).logits, reverse_run.model(src, tgt).logits)


def test_the_loaded_model_reverses_fresh_inputs(reverse_run, loaded):
    """Oracle: the reversed string. On 60 fresh examples (a seed the trainer never used) the loaded model's greedy
    output is the exact reverse for most of them (measured ~0.9 at 300 steps; asserted >= 0.6), and it is the
    same with and without the KV cache and the same as the in-memory model's."""
    model, tokenizer, _ = loaded
    rng = random.Random(2468)
    pairs = [TASKS["reverse"].sample(rng) for _ in range(60)]
    hits = 0
    for source, target in pairs:
        out = generate_text(model, tokenizer, source, 25)
        assert out == generate_text(model, tokenizer, source, 25, use_cache=False)
        assert out == generate_text(reverse_run.model, tokenizer, source, 25)
        hits += out == target
    assert hits / len(pairs) >= 0.6, hits / len(pairs)


def test_beam_search_and_streaming_on_the_trained_model(loaded):
    """Invariant: a trained model's streamed steps concatenate to generate_text's output, every streamed
    probability is in (0, 1], and beam search (4 beams, cached or not) agrees with itself."""
    model, tokenizer, _ = loaded
    source = "transformer"
    ids = tokenizer.encode(source) + [model.config.eos_id]
    steps = list(generate(model, ids, 25))
    assert tokenizer.decode(s.token_id for s in steps) == generate_text(model, tokenizer, source, 25)
    assert all(0 < s.prob <= 1 for s in steps)
    beam = generate_text(model, tokenizer, source, 25, strategy="beam", num_beams=4)
    assert beam == generate_text(model, tokenizer, source, 25, strategy="beam", num_beams=4, use_cache=False)


def test_the_reported_exact_match_is_reproducible_from_the_checkpoint(reverse_run, loaded):
    """Invariant: the final EvalEvent's exact match is recomputed exactly from the saved checkpoint on the same
    validation examples (the trainer's validation seed)."""
    model, tokenizer, _ = loaded
    final = [e for e in reverse_run.events if isinstance(e, EvalEvent)][-1]
    cfg = model.config
    pairs = TaskData(TASKS["reverse"], tokenizer, cfg, reverse_run.train_cfg.seed,
                     reverse_run.train_cfg.eval_examples).val_pairs
    src = source_batch(tokenizer, [s for s, _ in pairs], cfg)
    outputs = [tokenizer.decode(o) for o in greedy_batch(model, src, TASKS["reverse"].max_target_len + 1)]
    assert sum(o == t for o, (_, t) in zip(outputs, pairs)) / len(pairs) == final.exact_match


def test_cli_trains_writes_a_card_and_resumes(tmp_path):
    """Invariant: `python -m transformer.train` writes a loadable checkpoint whose README states the exact command
    and whose metrics are reproducible (exact_match recomputed from the checkpoint with the CLI's seed); --resume
    continues the same run from its step count, logging only the new steps."""
    out = tmp_path / "copy"
    args = ["--task", "copy", "--out", str(out), "--d-model", "16", "--n-heads", "2", "--n-encoder-layers", "1",
            "--n-decoder-layers", "1", "--d-ff", "32", "--dropout", "0", "--steps", "3", "--batch-size", "8",
            "--eval-every", "3", "--eval-examples", "8", "--threads", "1"]
    cli_main(args)
    model, tokenizer, info = load_checkpoint(out, device="cpu")
    assert info["task"] == "copy" and info["training"]["steps"] == 3
    card = (out / "README.md").read_text()
    assert info["training"]["command"] in card and "--task copy" in card
    assert info["metrics"]["exact_match"] == exact_match(model, tokenizer, TASKS["copy"], n=1000, seed=2024)
    cli_main(args[:args.index("--steps") + 1] + ["5"] + args[args.index("--steps") + 2:] + ["--resume"])
    log = [json.loads(line) for line in (tmp_path / "copy.log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log if r["kind"] == "step"] == [1, 2, 3, 4, 5]
    assert load_checkpoint(out, device="cpu")[2]["training"]["steps"] == 5
