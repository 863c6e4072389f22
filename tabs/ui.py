"""What the tabs share about drawing: how many tokens a heatmap shows, and the queue of quick redraws."""

ATTENTION_CAP = 64  # tokens shown on a heatmap's axes
STREAM_UPDATES_PER_SECOND = 10  # generated text: redrawn at most this often while it streams
FAST = dict(trigger_mode="always_last", show_progress="hidden", concurrency_limit=8, concurrency_id="draw")
