"""The Train tab: the page (page), a request read from its controls (request), a run's Stop (stop_signal), a training
run (session), a comparison of variants (comparison), an induction head forming (watch) and the live heatmap."""
