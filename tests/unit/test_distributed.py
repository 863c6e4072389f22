"""Distributed training (torchrun + DistributedDataParallel) and CUDA: a run's result does not depend on how many
processes share it, rank 0 alone writes, --resume works under torchrun, and the loss rule that makes this true.

The torchrun tests start `python -m torch.distributed.run --standalone --nproc_per_node=2` on this machine's
loopback (gloo, CPU, one thread each). Tests that need CUDA run where it is present and are skipped otherwise; the
CPU runs go through the same code paths (the World, the rows of a batch, autocast on the model's device).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file

from transformer.checkpoint import load_checkpoint
from transformer.train.cli import main as cli_main
from transformer.config import TransformerConfig
from transformer.data import TASKS, TaskData
from transformer.train.distributed import World, init
from transformer.model import Transformer
from transformer.tokenization import CharTokenizer
from transformer.train import TrainConfig, Trainer, loss_share

ROOT = Path(__file__).resolve().parents[2]
K = 10  # steps of the first run; the resumed run goes on to 2K


def command(out: Path, steps: int, device: str = "cpu") -> list[str]:
    """A tiny reverse-task model with dropout 0 and a constant learning rate large enough that the weights move
    far (~0.03) from their initial values in K steps; the task pads its batches, so the loss rule matters."""
    return ["--task", "reverse", "--out", str(out), "--d-model", "16", "--n-heads", "2", "--n-encoder-layers", "1",
            "--n-decoder-layers", "1", "--d-ff", "32", "--dropout", "0", "--schedule", "constant", "--lr", "3e-3",
            "--steps", str(steps), "--batch-size", "8", "--eval-every", "100", "--eval-examples", "4",
            "--threads", "1", "--seed", "3", "--device", device]


def torchrun(args: list[str], nproc: int = 2) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "MASTER_ADDR": "127.0.0.1"}
    if Path("/sys/class/net/lo").exists():
        env["GLOO_SOCKET_IFNAME"] = "lo"  # gloo talks over the loopback interface only
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
                           "-m", "transformer.train", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]


def log_records(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def steps_of(log: Path) -> dict[int, dict]:
    return {r["step"]: r for r in log_records(log) if r["kind"] == "step"}


def assert_same_training(a: Path, b: Path, log_a: Path, log_b: Path) -> None:
    """The two runs logged the same loss and gradient norm at every step and ended at the same weights.

    The key projections' biases are compared through the outputs instead: softmax ignores a term added to every
    score of a query, and q . b_k is one, so their gradient is 0 in exact arithmetic and Adam (eps 1e-9) turns its
    rounding noise into steps of up to lr. They wander apart by a few lr between any two runs that round differently
    (one process with --threads 1 against --threads 2 too: 7e-4 after 10 noam steps), and change no output."""
    steps_a, steps_b = steps_of(log_a), steps_of(log_b)
    assert sorted(steps_a) == sorted(steps_b)
    for step, record in steps_a.items():
        assert record["loss"] == pytest.approx(steps_b[step]["loss"], rel=1e-5), step
        # the norm of the whole batch's gradient: were the ranks' gradients averaged, not summed, it would halve
        assert record["grad_norm"] == pytest.approx(steps_b[step]["grad_norm"], rel=1e-4), step
    weights_a, weights_b = load_file(str(a / "model.safetensors")), load_file(str(b / "model.safetensors"))
    assert weights_a.keys() == weights_b.keys()
    for name in weights_a:
        a_w, b_w = weights_a[name], weights_b[name]
        if name.endswith("in_proj.bias"):  # rows [b_Q; b_K; b_V]: leave out b_K (see above)
            n_q = a_w.numel() // 3
            a_w, b_w = torch.cat([a_w[:n_q], a_w[2 * n_q:]]), torch.cat([b_w[:n_q], b_w[2 * n_q:]])
        torch.testing.assert_close(a_w, b_w, atol=1e-4, rtol=0, msg=name)
    (model_a, tok, _), (model_b, _, _) = load_checkpoint(a, device="cpu"), load_checkpoint(b, device="cpu")
    data = TaskData(TASKS["reverse"], tok, model_a.config, seed=11, n_val=1)
    (src, tgt_in), _ = data.train_batch(16)
    with torch.no_grad():
        torch.testing.assert_close(model_a(src, tgt_in).logits, model_b(src, tgt_in).logits, atol=1e-4, rtol=0)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One process for K and for 2K steps; under torchrun with 2 processes K steps, then --resume to 2K."""
    tmp = tmp_path_factory.mktemp("ddp")
    cli_main(command(tmp / "single", K))
    cli_main(command(tmp / "single2k", 2 * K))
    torchrun(command(tmp / "ddp" / "run", K))
    shutil.copytree(tmp / "ddp" / "run", tmp / "ddp_k")  # the K-step checkpoint, before the resume replaces it
    shutil.copy(tmp / "ddp" / "run.log.jsonl", tmp / "ddp_k.log.jsonl")
    torchrun(command(tmp / "ddp" / "run", 2 * K) + ["--resume"])
    return tmp


@pytest.mark.slow
def test_two_processes_train_the_weights_one_process_trains(runs):
    """Oracle: `torchrun --nproc_per_node=2` (gloo, CPU) trains, in K steps, the weights the same command trains in
    one process (to 1e-4; measured 1.2e-7), with the same loss and gradient norm at every step, though the batches
    are padded and each rank holds a different number of real tokens; the weights moved far from their initial
    values, so the agreement is not that of an untrained model. The DDP checkpoint loads, and its record says 2
    processes."""
    assert_same_training(runs / "single", runs / "ddp_k", runs / "single.log.jsonl", runs / "ddp_k.log.jsonl")
    model, _, info = load_checkpoint(runs / "ddp_k", device="cpu")
    assert info["training"]["world_size"] == 2 and info["training"]["steps"] == K
    assert "2 processes (gloo, torchrun)" in info["training"]["hardware"]
    assert "2 processes (gloo, torchrun)" in (runs / "ddp_k" / "README.md").read_text()
    assert load_checkpoint(runs / "single", device="cpu")[2]["training"]["world_size"] == 1
    torch.manual_seed(3)  # --seed 3 decides the initial weights
    initial = Transformer(TransformerConfig.from_dict(info["model"])).state_dict()
    moved = max(float((value - initial[name]).abs().max()) for name, value in model.state_dict().items())
    assert moved > 0.01, moved


@pytest.mark.slow
def test_only_rank_0_writes_one_log_and_one_checkpoint(runs):
    """Invariant: rank 0 alone writes: one checkpoint directory and one JSONL log, whose records are each step
    once (1..K, then K+1..2K after the resume) and one evaluation at each run's last step, nothing else."""
    assert sorted(os.listdir(runs / "ddp")) == ["run", "run.log.jsonl"]
    records = [(r["kind"], r["step"]) for r in log_records(runs / "ddp" / "run.log.jsonl")]
    assert records == ([("step", s) for s in range(1, K + 1)] + [("eval", K)]
                       + [("step", s) for s in range(K + 1, 2 * K + 1)] + [("eval", 2 * K)])


@pytest.mark.slow
def test_resume_under_torchrun_equals_the_uninterrupted_run(runs):
    """Invariant (resume == uninterrupted, across processes): K steps under torchrun, then `--resume` to 2K under
    torchrun, gives the losses, gradient norms and weights of one process training 2K steps straight."""
    assert_same_training(runs / "single2k", runs / "ddp" / "run", runs / "single2k.log.jsonl",
                         runs / "ddp" / "run.log.jsonl")
    info = load_checkpoint(runs / "ddp" / "run", device="cpu")[2]
    assert info["training"]["steps"] == 2 * K and info["training"]["world_size"] == 2


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 CUDA GPUs")
def test_two_gpus_with_nccl_train_the_weights_one_gpu_trains(tmp_path):
    """Oracle: the same as on the CPU, with one process per GPU (cuda:LOCAL_RANK, NCCL) against one GPU."""
    cli_main(command(tmp_path / "single", K, device="cuda"))
    torchrun(command(tmp_path / "ddp", K, device="cuda"))
    assert_same_training(tmp_path / "single", tmp_path / "ddp", tmp_path / "single.log.jsonl",
                         tmp_path / "ddp.log.jsonl")
    info = load_checkpoint(tmp_path / "ddp", device="cpu")[2]
    assert "2 processes (nccl, torchrun)" in info["training"]["hardware"] and "GPU" in info["training"]["hardware"]


# --- the rules, without processes -------------------------------------------------------------------------------


def test_the_ranks_rows_cover_the_global_batch_once_in_order():
    """Invariant: the ranks' rows are consecutive equal slices that cover the global batch once, in rank order; a
    global batch that does not split evenly is refused, by World.rows and by the Trainer before it trains."""
    for world_size in (1, 2, 4):
        rows = [World(rank, world_size).rows(8) for rank in range(world_size)]
        assert [i for r in rows for i in range(8)[r]] == list(range(8))
    with pytest.raises(ValueError, match="split evenly over 2 processes: use a multiple of 2"):
        World(1, 2).rows(7)
    tok = CharTokenizer(TASKS["reverse"].alphabet)
    config = TransformerConfig(vocab_size=tok.vocab_size, d_model=16, n_heads=2, n_encoder_layers=1,
                               n_decoder_layers=1, d_ff=32, max_len=22)
    with pytest.raises(ValueError, match="split evenly"):
        Trainer(Transformer(config), tok, TaskData(TASKS["reverse"], tok, config, 0, 4), TrainConfig(batch_size=7),
                world=World(0, 2))


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("world_size", [2, 3])
def test_the_ranks_loss_shares_add_up_to_the_one_process_loss(smoothing, world_size):
    """Oracle: the shares of the ranks (each: its rows' per-token cross-entropy, label-smoothed, summed over its
    real tokens and divided by the real tokens of the whole global batch) add up to the one-process loss, the mean
    over all real tokens, though padding gives the ranks different numbers of real tokens; the mean of the ranks'
    own means, what a per-rank mean averaged by DDP would train on, does not."""
    tok = CharTokenizer(TASKS["reverse"].alphabet)
    config = TransformerConfig(vocab_size=tok.vocab_size, d_model=16, n_heads=2, n_encoder_layers=1,
                               n_decoder_layers=1, d_ff=32, dropout=0.0, max_len=22)
    torch.manual_seed(0)
    model = Transformer(config).eval()
    (src, tgt_in), tgt_out = TaskData(TASKS["reverse"], tok, config, 5, 4).train_batch(6)
    real = tgt_out != config.pad_id
    counts = [int(real[World(r, world_size).rows(6)].sum()) for r in range(world_size)]
    assert len(set(counts)) > 1, f"precondition: the ranks hold different numbers of real tokens, {counts}"
    with torch.no_grad():
        logits = model(src, tgt_in).logits  # (B, T, vocab_size)
    single = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=config.pad_id,
                             label_smoothing=smoothing)
    shares, means = [], []
    for rank in range(world_size):
        rows = World(rank, world_size).rows(6)
        mine = logits[rows].flatten(0, 1), tgt_out[rows].flatten()
        shares.append(loss_share(*mine, config.pad_id, smoothing, real.sum()))
        means.append(F.cross_entropy(*mine, ignore_index=config.pad_id, label_smoothing=smoothing))
    assert float(sum(shares)) == pytest.approx(float(single), rel=1e-6)
    assert abs(float(sum(means) / world_size) - float(single)) > 1e-3


def test_each_rank_draws_its_own_dropout_masks_and_the_shared_stream_moves_alike():
    """Invariant: inside own_random_stream two ranks, starting from the same random state, draw different dropout
    masks, and both leave the shared state where one draw takes it (so it stays the same on every rank and a
    resume restores it); one process draws exactly what it would without it."""
    torch.manual_seed(0)
    start = torch.get_rng_state()
    masks, after = [], []
    for rank in (0, 1):
        torch.set_rng_state(start)
        with World(rank, 2).own_random_stream():
            masks.append(F.dropout(torch.ones(64, 64), 0.5))
        after.append(torch.get_rng_state())
    assert not torch.equal(masks[0], masks[1])
    assert torch.equal(after[0], after[1])
    torch.set_rng_state(start)
    torch.randint(2**62, ())
    assert torch.equal(torch.get_rng_state(), after[0])
    torch.set_rng_state(start)
    with World().own_random_stream():
        alone = F.dropout(torch.ones(64, 64), 0.5)
    torch.set_rng_state(start)
    assert torch.equal(alone, F.dropout(torch.ones(64, 64), 0.5))


def test_one_process_takes_cuda_when_present_else_the_cpu(monkeypatch):
    """Invariant: without torchrun, `--device auto` is one process on the CUDA device when there is one (with its
    index, as the model reports it), else on the CPU; an explicit device wins."""
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    world = init("auto")
    assert (world.rank, world.world_size, world.backend) == (0, 1, None)
    expected = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")
    assert world.device == expected
    assert init("cpu").device == torch.device("cpu")


# --- CUDA (and the same path on the CPU) ---------------------------------------------------------------------------

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not (torch.cuda.is_available() and torch.cuda.is_bf16_supported()), reason="needs a CUDA GPU with bf16"))]


@pytest.mark.parametrize("device", DEVICES)
def test_bf16_autocast_runs_on_the_models_device(device):
    """Invariant: with bf16 on, the Trainer's forward runs under autocast for the model's device type (the logits
    come out bfloat16 on that device), the weights stay float32, and a few steps give finite, moving losses."""
    tok = CharTokenizer(TASKS["reverse"].alphabet)
    config = TransformerConfig(vocab_size=tok.vocab_size, d_model=32, n_heads=4, n_encoder_layers=1,
                               n_decoder_layers=1, d_ff=64, dropout=0.1, max_len=22)
    torch.manual_seed(0)
    model = Transformer(config).to(device)
    seen = []
    model.register_forward_hook(lambda module, args, out: seen.append((out.logits.dtype, out.logits.device.type)))
    cfg = TrainConfig(steps=4, batch_size=8, bf16=True, schedule="constant", lr=1e-3, eval_every=100)
    losses = [e.loss for e in Trainer(model, tok, TaskData(TASKS["reverse"], tok, config, 0, 4), cfg).run()
              if e.kind == "step"]
    assert seen[0] == (torch.bfloat16, device)
    assert all(p.dtype == torch.float32 and p.device.type == device for p in model.parameters())
    assert all(map(torch.isfinite, torch.tensor(losses))) and len(set(losses)) == 4


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_the_cli_trains_on_cuda_when_present(tmp_path):
    """Invariant: `--device auto` (the default) trains on the GPU: the card's hardware line names it, the
    checkpoint loads, and a resume continues on the GPU where the run stopped."""
    cli_main(command(tmp_path / "run", K, device="auto"))
    info = load_checkpoint(tmp_path / "run", device="cpu")[2]
    assert "GPU" in info["training"]["hardware"] and info["training"]["world_size"] == 1
    cli_main(command(tmp_path / "run", 2 * K, device="auto") + ["--resume"])
    assert load_checkpoint(tmp_path / "run", device="cpu")[2]["training"]["steps"] == 2 * K
    assert sorted(steps_of(tmp_path / "run.log.jsonl")) == list(range(1, 2 * K + 1))
