"""The section of a checkpoint's card on its shipped SAEs, written from config.json's "features" entries alone (so a
card writer that rebuilds the whole card, transformer/translation/card.py, keeps it)."""
from __future__ import annotations

CARD_HEADING = "## Sparse features of the attention outputs (SAEs)"


def card_section(name: str, entries: list[dict]) -> str:
    """The card's section on the shipped SAEs: what they are, how trained, their metrics."""
    e0 = entries[0]
    sae, training = e0["sae"], e0["training"]
    lines = [CARD_HEADING, "",
             f"One sparse autoencoder per layer on the concatenated head outputs z (before W^O), "
             f"`transformer.interpretability.features` (Kissane et al. 2024): {sae['kind']} with F = "
             f"{sae['n_features']} features" + (f", k = {sae['k']}" if sae["kind"] == "topk" else "") +
             f", decoder rows of unit norm; Adam lr {training['lr']}, {training['steps']} steps of "
             f"{training['batch_size']} activations, seed {training['seed']}.", "",
             f"- trained on: {e0['trained_on']} ({e0['activations']:,} positions)",
             f"- measured on: {e0['measured_on']} (held out)",
             f"- hardware: {e0['hardware']}; budget: 5 minutes of CPU per layer (the measured wall time, "
             "activations and training, in the last column)",
             "", "| layer | file | explained variance | L0 | dead | loss clean | spliced | zero-ablated | "
             "recovered | train s |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for e in entries:
        m = e["metrics"]
        lines.append(f"| {e['kind']} {e['layer']} | `{e['file']}` | {m['explained_variance']:.3f} | {m['l0']:.1f} | "
                     f"{m['dead_fraction']:.3f} | {m['loss_clean']:.3f} | {m['loss_spliced']:.3f} | "
                     f"{m['loss_zero_ablation']:.3f} | {m['loss_recovered']:.3f} | {e['wall_time_s']} |")
    lines += ["", "Losses in nats per predicted token; spliced: z replaced by the SAE's reconstruction; zero-ablated: "
              "z := 0; recovered = (zero - spliced) / (zero - clean). Recompute them with "
              f"`python -m transformer.interpretability.features checkpoints/{name} --check`.", ""]
    return "\n".join(lines)
