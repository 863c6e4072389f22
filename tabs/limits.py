"""The app's limits that keep one client from taking the server down (README, "Safety and limits", states each).

The Train tab's own limits (model size, steps, text length, seconds) are LIMITS in tabs.train_request; these are
the ones around every request: what a request may carry, how many may wait, what a run may allocate, and how much
disk and memory the app keeps for everyone.
"""
from __future__ import annotations

CHAR_VOCAB = 512  # a text model's characters: the 508 most frequent get an id each, the rest become <unk>
UPLOAD_BYTES = 9 << 20  # a .txt upload: the 2M-character text limit at 4 UTF-8 bytes each, and 1 MiB more
BODY_BYTES = 16 << 20  # any request body (the JSON of a call): 2M characters escaped, with room to spare
TRAINING_BYTES = 5 << 29  # 2.5 GiB: the estimated peak of one training run (transformer.memory); more is refused
QUEUE_WAITING = {"train": 8}  # requests waiting per concurrency group; other groups: DEFAULT_WAITING each
DEFAULT_WAITING = 64
TRAININGS_PER_CLIENT = 1  # queued or running, per session and per client address
STORED_MODELS = 48  # trained models kept for every browser together (each browser: its last 3)
SESSIONS = 256  # sessions whose state gradio keeps (~0.4 MB each: its copy of the page's config), least recently
#                used out first; gradio's default, 10,000, let invented session ids hold about 4 GB
DISK_BYTES = 1 << 30  # the app's folder (gradio's cache: uploads, served files, exports); ATTENTION_LAB_DISK_BYTES
DISK_SWEEP_SECONDS = 30  # how often that budget is checked (and after every upload and download)

