"""Reading a trained model: what its heads attend to, what they move, and what each layer predicts. One module per
idea (the probe, head scores and detectors, ablation, head metrics, words, ...); import them by name."""
