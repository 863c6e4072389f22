"""The Train tab's "Compare variants": the requested model trained once per variant (transformer.compare), streamed
as loss curves and a final table. No gradio here."""
from __future__ import annotations

import time

import pandas as pd

import visualize as viz
from transformer.compare import COMPARISONS, ComparisonSetup, compare_variants, comparison_variants, rewound

from .train_request import LIMITS, TrainingRequest, build_run


COMPARE_LIMITS = {"steps": 1500, "seconds": 300, "seconds_per_variant": 100}  # one request: at most ~5 minutes


def run_comparison_session(request: TrainingRequest, which: str = "kv-heads",
                           seconds: float = COMPARE_LIMITS["seconds"]):
    """A comparison of attention variants (transformer.compare: `which` names one of COMPARISONS): the requested
    model trained once per variant, one after the other, same data, steps and seed; yields (figure of the loss
    curves, status, table or None), a few times a second, and at the end the table of parameters, KV-cache bytes
    per token, training and decoding speed, final quality and how far the heads look. The variants share
    `seconds` of wall-clock time, each at most COMPARE_LIMITS["seconds_per_variant"]."""
    request = request.validated()
    if which not in COMPARISONS:
        raise ValueError(f"Compare: choose one of {', '.join(COMPARISONS)}, got {which!r}")
    request.steps = min(request.steps, COMPARE_LIMITS["steps"])
    run = build_run(request)
    config, train_cfg = run.model.config, run.train_cfg
    try:
        variants = comparison_variants(which, config)
    except ValueError as e:
        raise ValueError(f"Compare {COMPARISONS[which]}: {e}") from None
    train_cfg.max_seconds = min(COMPARE_LIMITS["seconds_per_variant"], seconds / len(variants))
    setup = ComparisonSetup(config, run.tokenizer, train_cfg, rewound(run.data))
    del run  # each variant builds its own model
    title = f"{COMPARISONS[which]}: train loss"
    curves, rows, note, last_yield, status = {}, [], "", 0.0, "Starting…"
    label = lambda v: f"{v.name} ({v.n_kv_heads} kv heads)" if v.name in ("MHA", "GQA", "MQA") else v.name  # noqa: E731
    for event in compare_variants(setup, variants, decode_tokens=32, speed_rounds=5):
        if event.kind == "plan":
            note = (event.note + " ") if event.note else ""
            curves = {label(v): ([], []) for v in event.variants}
            status = note + f"Training {', '.join(curves)} for {event.steps} steps each, one after the other…"
        elif event.kind == "train" and event.event.kind == "step":
            steps, losses = curves[label(event.variant)]
            steps.append(event.event.step)
            losses.append(event.event.loss)
            status = note + f"{label(event.variant)}: step {event.event.step}/{train_cfg.steps} · " \
                            f"loss {event.event.loss:.3f}"
        elif event.kind == "row":
            rows.append(event.to_dict())
            continue
        if time.perf_counter() - last_yield > 1 / LIMITS["updates_per_second"]:
            last_yield = time.perf_counter()
            yield viz.comparison_curves(curves, title=title), status, None
    table = pd.DataFrame(rows)
    yield viz.comparison_curves(curves, title=title), note + "**Done.** Same data, steps and seed for each.", table
