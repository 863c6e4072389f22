"""The Train tab's "Compare variants": the requested model trained once per variant (transformer.train.compare), streamed
as loss curves and a final table; Stop ends it with the rows of the variants already trained. No gradio here."""
from __future__ import annotations

from transformer.interpretability.head_metrics import mean_attended_distance
from transformer.train.compare import COMPARISONS, ComparisonSetup, compare_variants, comparison_variants, rewound
from visualize.comparison_table import comparison_tables
from visualize.line_chart import comparison_chart

from limits import COMPARE
from tabs.train.lifecycle import Throttle, training_device
from tabs.train.request import TrainingRequest, build_run


def _label(name: str, n_kv_heads: int | None) -> str:
    """A variant's name on the plot and in the table: MHA, GQA and MQA say how many key/value heads they have."""
    return f"{name} ({n_kv_heads} kv heads)" if name in ("MHA", "GQA", "MQA") else name


def run_comparison_session(request: TrainingRequest, which: str = "kv-heads",
                           seconds: float = COMPARE["seconds"], control=None):
    """A comparison of attention variants (transformer.train.compare: `which` names one of COMPARISONS): the requested
    model trained once per variant, one after the other, same data, steps and seed, on the Train tab's device
    (tabs.train.lifecycle.training_device); yields (the loss curves as an SVG chart (visualize.line_chart), status,
    main table or None, details table or None), at most TRAINING["updates_per_second"] a second, and at the end the
    tables (visualize.comparison_table) of parameters, KV-cache bytes per token, training and decoding speed, final
    quality and how far the heads look. The variants share `seconds` of wall-clock time, each at most
    COMPARE["seconds_per_variant"]. `control.is_set()` (the Stop button) ends it after the current step: the
    variants trained before get their rows, every curve stays as far as it got."""
    request = request.validated()
    if which not in COMPARISONS:
        raise ValueError(f"Variants to compare must be one of {', '.join(COMPARISONS)}, got {str(which)[:40]!r}")
    request.steps = min(request.steps, COMPARE["steps"])
    run = build_run(request)
    config, train_cfg = run.model.config, run.train_cfg
    try:
        variants = comparison_variants(which, config)
    except ValueError as e:
        raise ValueError(f"Compare {COMPARISONS[which]}: {e}") from None
    train_cfg.max_seconds = min(COMPARE["seconds_per_variant"], seconds / len(variants))
    setup = ComparisonSetup(config, run.tokenizer, train_cfg, rewound(run.data), attended_distance=mean_attended_distance)
    del run  # each variant builds its own model
    title = f"{COMPARISONS[which]}: train loss"
    curves, rows, note, throttle, status, current = {}, [], "", Throttle(), "Starting…", None
    stop = control.is_set if control is not None else None
    for event in compare_variants(setup, variants, decode_tokens=32, speed_rounds=5, stop=stop,
                                  device=training_device()):
        if event.kind == "plan":
            note = (event.note + " ") if event.note else ""
            curves = {_label(v.name, v.n_kv_heads): ([], []) for v in event.variants}
            status = note + f"Training {', '.join(curves)} for {event.steps} steps each, one after the other…"
        elif event.kind == "train" and event.event.kind == "step":
            current = _label(event.variant.name, event.variant.n_kv_heads)
            steps, losses = curves[current]
            steps.append(event.event.step)
            losses.append(event.event.loss)
            status = note + f"**{current}**: step {event.event.step:,} / {train_cfg.steps:,} · " \
                            f"loss {event.event.loss:.3f}"
        elif event.kind == "row":
            rows.append({**event.to_dict(), "variant": _label(event.variant, event.n_kv_heads)})
            continue
        if throttle.due():
            yield comparison_chart(curves, title, x_max=train_cfg.steps), status, None, None
    main, details = comparison_tables(rows)
    if len(rows) < len(variants):  # Stop
        kept = (f"the table has the {len(rows)} variant{'s' * (len(rows) != 1)} trained before it"
                if rows else "no variant had finished, so there is no table")
        status = (f"**Comparison stopped** during {current}: {kept}; every curve shows how far its variant got.")
    else:
        status = "**Done.** Same data, steps and seed for each."
    # ended: the legend names only the variants that drew a curve (Stop may leave some untrained)
    yield comparison_chart(curves, title, x_max=train_cfg.steps, planned=False), note + status, main, details
