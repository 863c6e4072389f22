"""A training run built from what it trains on: the tokenizer, the data-dependent fields of the model's config, the
model initialised right after seeding, and the data source. The CLI and the app's Train tab both build runs here,
and the comparison of variants seeds its models through `seeded_model`, so the three cannot drift apart.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..config import TransformerConfig
from ..data import INDUCTION_ALPHABET, INDUCTION_MIN_HALF, TASKS, InductionData, TaskData, TextData
from ..encoding import max_len_for
from ..memory import check_training_memory
from ..model import Transformer
from ..tokenization import CharTokenizer
from .trainer import TrainConfig


@dataclass
class Run:
    """What a Trainer needs: Trainer(run.model, run.tokenizer, run.data, run.train_cfg)."""

    model: Transformer
    tokenizer: object
    data: TaskData | TextData | InductionData
    train_cfg: TrainConfig
    task: str | None  # the task's name, "induction", or None for a language model


def seeded_model(config: TransformerConfig, seed: int, device: str | torch.device = "cpu") -> Transformer:
    """A fresh model whose weights are drawn right after seeding torch with `seed`: the same seed gives the same
    initial weights (and, after them, the same dropout masks) whatever ran before in the process. The one seeding
    rule of the CLI's --seed, the Train tab and every variant of a comparison."""
    torch.manual_seed(seed)
    return Transformer(config).to(device)


def build_run(train_cfg: TrainConfig, *, task: str | None = None, induction: bool = False,
              text: tuple[str, str] | None = None, tokenizer=None, device: str | torch.device = "cpu",
              max_vocab: int | None = None, memory_limit: int | None = None, **model_fields) -> Run:
    """The run of one of: a synthetic `task` (an encoder-decoder by default, on the task's characters), the
    `induction` task (decoder-only), or a language model on `text` = (training text, validation text) (decoder-only;
    a character tokenizer of the training text unless `tokenizer` is given). `model_fields` are TransformerConfig
    fields; the vocabulary comes from the tokenizer and max_len, unless given, from the task or the block size.
    A ValueError names what does not fit. `max_vocab` caps the character tokenizer of a text (its rarer characters
    become <unk>); with `memory_limit` (bytes), a run whose estimated training peak (transformer.memory) is over it
    is refused before the model is built."""
    if sum((task is not None, induction, text is not None)) != 1:
        raise ValueError("a run trains on one of: a task, the induction task, or a text")
    fields = dict(model_fields)
    if task is not None:
        if task not in TASKS:
            raise ValueError(f"unknown task {str(task)[:40]!r}; choose one of {', '.join(sorted(TASKS))}")
        tokenizer = tokenizer or CharTokenizer(TASKS[task].alphabet)
        fields.setdefault("max_len", max_len_for(TASKS[task].max_source_len, TASKS[task].max_target_len))
    else:
        if induction:
            tokenizer = tokenizer or CharTokenizer(INDUCTION_ALPHABET)
        else:
            tokenizer = tokenizer or CharTokenizer.from_text(text[0], max_vocab)  # it sees the training text only
        fields.setdefault("arch", "decoder-only")
        fields.setdefault("max_len", train_cfg.block_size)
    config = TransformerConfig(vocab_size=tokenizer.vocab_size, **fields)
    if (induction or text is not None) and config.is_encoder_decoder:
        raise ValueError(f"{'the induction task' if induction else 'a language model'} trains a decoder-only model: "
                         f"drop arch=encoder-decoder")
    if memory_limit is not None:
        check_training_memory(config, train_cfg.batch_size, memory_limit)
    model = seeded_model(config, train_cfg.seed, device)
    seed, n_val = train_cfg.seed, train_cfg.eval_examples
    if task is not None:
        data = TaskData(TASKS[task], tokenizer, config, seed, n_val)
    elif induction:
        ids = torch.tensor(tokenizer.encode(INDUCTION_ALPHABET))
        data = InductionData(ids, INDUCTION_MIN_HALF, config.max_len, seed, n_val)
    else:
        data = TextData(text[0], text[1], tokenizer, train_cfg.block_size, seed, n_val)
    return Run(model, tokenizer, data, train_cfg, "induction" if induction else task)
