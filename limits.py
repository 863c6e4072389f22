"""Every bound of the app, in one place (docs/safety.md, states each): what a request may carry, how
many may wait, what a run may allocate or take, how much the app keeps for everyone, and the ranges of the
controls. A leaf module: it imports nothing of the app, and every room (server/, store/, widgets/, tabs/, app.py)
reads its numbers from here; tests/test_one_owner.py checks that the forms below are not written anywhere else.
"""
from __future__ import annotations

# What a request may carry
CHAR_VOCAB = 512  # a text model's characters: the 508 most frequent get an id each, the rest become <unk>
UPLOAD_BYTES = 9 << 20  # a .txt upload: the 2M-character text limit at 4 UTF-8 bytes each, and 1 MiB more
BODY_BYTES = 16 << 20  # any request body (the JSON of a call): 2M characters escaped, with room to spare
# Large bodies read and parsed at once (server.body_budget): each is held ~4 times over until gradio's queue takes or
# refuses its call, so 32 figure exports sent at once peaked at +1,071 MB; 4 bodies of 16 MiB fit, one more waits its
# turn up to wait_s, then is refused in words. Bodies under `counted` (a call's few KiB) never wait.
BODIES_READ = {"bytes": 64 << 20, "counted": 1 << 20, "wait_s": 30}
MAX_PROMPT_CHARS = 2000  # a prompt or any other typed input of the Generate and Attention tabs
HUB_NAME_CHARS = 200  # the name of a Hugging Face Hub dataset to train on
LINK_CHARS = 8000  # the query of a link to a view (store.view_link): proxies and chat apps cut longer URLs (nginx
#                    and many proxies stop at 8 KiB of request line); a 2,000-character ASCII input fits
QUERY_CHARS = 2 * LINK_CHARS  # any request's query (a link's, which the page's calls repeat, with a host's own keys):
#                               longer is refused in words (414); past 65,536 httpx fails inside gradio (HTTP 500)

# How many may wait and run
TRAINING_GROUP = "train"  # the concurrency group of every training (Start, Compare, Watch) and its own waiting line
# Each group's line (server.lines) serves clients in turn, by address, then by browser (server.fair_line), and a
# client holds at most a few of its places. A browser: one training (waiting or running: a run takes minutes, and
# a page has one Start); 4 waiting requests of any other kind (a page sends at most one call per event at a time,
# and its events share 3 lines at most: Show attention and the two-inputs record, the redraws, a generation).
# An address (a school behind one NAT; an IPv6 /64): half of a line (a class of 30 with a request each fits, and
# an address inventing browsers holds at most that); 8 trainings (a class of 5 all queue). A full line gives a
# newcomer the place of an address holding two more than its own (the flood's, never the honest one-request
# client's), so 10 flooding addresses cannot lock out an 11th: measured in bench/hostile_load.py. 64 trainings
# may wait (a waiting one costs only its request, at most a 2M-character pasted text): 8 addresses' worth, so a
# class of 5 still gets 5 places while the line is shared equally among up to ~12 addresses.
EXPORT_FIGURE_GROUP = "export-figure"  # a figure saved as HTML: its request carries the figure (up to 16 MiB)
FIGURE_TABLE_GROUP = "figure-table"  # a figure's "Show as a table": its request carries the figure too
QUEUE_WAITING = {TRAINING_GROUP: 64,  # requests waiting per concurrency group; other groups: DEFAULT_WAITING each
                 EXPORT_FIGURE_GROUP: 8,  # each waiting figure export holds its figure: 8 of 12.5 MiB, ~100 MiB
                 FIGURE_TABLE_GROUP: 8}  # the same for a table asked of a figure
DEFAULT_WAITING = 64
ADDRESS_WAITING = {TRAINING_GROUP: 8}  # waiting requests of one address per group; others: DEFAULT_ADDRESS_WAITING
DEFAULT_ADDRESS_WAITING = 32
# A class behind one address presses one demo at once (40 students: 40 identical requests). In the lines whose
# identical requests share one computation (store.record_cache.SingleFlight: the records and every figure drawn from
# them), the copies of a request an address already has waiting take no more of its ADDRESS_WAITING places: it
# counts its distinct requests (server.fair_line.distinct_requests). The browser bound, the running bounds, the
# line's QUEUE_WAITING and a full line's make_room (which counts every request) hold as before.
SHARED_GROUPS = ("attention", "draw")
BROWSER_WAITING = {TRAINING_GROUP: 1}  # a browser's trainings (waiting or running); others: DEFAULT_BROWSER_WAITING
DEFAULT_BROWSER_WAITING = 4  # waiting requests of one browser per group
# Running, not only waiting: a line starts a request only if its browser runs fewer than its BROWSER_RUNNING of the
# line and its address fewer than all of the line's places but ADDRESS_SPARE (server.fair_line.held_back; the rest
# wait, in their turn, and start when one of their client's ends). A page runs one call of a line at a time (each
# event runs once at a time; Show attention, then Compare on its record), but a change of head redraws together
# the heatmaps, the caption and each open section's figures: a browser runs 1 request of a line, 4 of the redraws
# (half their places). So a flooding page keeps at most 1 of Show attention's 4 places busy, and an
# honest page's request starts at once in the other 3 (before: it waited for one of the flooder's 4 to end, each a
# 2,000-character translation: issue 30's p95 of 6.9 s). An address (a school's NAT on a Space, an IPv6 /64) leaves
# one place of a line of 3 or more to the other addresses (a class behind it runs 3 of 4 Show attentions, 7 of 8
# redraws; a line of 2 places, as trainings, is not split: a class would run one at a time). Loopback ("") is every
# local page's address: only the browser bound applies there.
BROWSER_RUNNING = {"draw": 4}  # requests of one browser running at once per group; others: DEFAULT_BROWSER_RUNNING
DEFAULT_BROWSER_RUNNING = 1
ADDRESS_SPARE = 1  # places of a line of 3 or more that one address leaves to others (not loopback)
TURNS_RECORDED = 1024  # runs of the training line recorded to check its turns (tests.turn_record, in the tests: a
#                       ring of times, run numbers and salted hashes, ~1 KiB a run with a full line behind it)
# A waiting request is told its place in line when it joins and then every PLACES_EVERY_S (gradio's
# status_update_rate), not at every join and start of the line: with 40 students pressing one demo, gradio's "auto"
# sent each waiting request its place again at each of them, 2,272 of the 2,432 messages of the press
# (bench/class_load.py, bench/RESULTS.md "Issue 39, item 6")
PLACES_EVERY_S = 1.0
QUEUE_SIZE = 2048  # gradio's own cap on every waiting request together (each group's line is above)
# A client refused a place in a line again and again (its share held: server.lines) waits for each refusal after
# the first: 0.25 s, 0.5, 1, 2, then 4 s each (server.backoff), counted by browser and by address (not loopback),
# forgotten after 30 s without one; 4,096 clients' counts kept; at most 256 refusals waiting at once, each of a
# request of at most 64 KiB (a Show-attention join is under 13 KiB; a waiting refusal keeps its request): past
# these, answered at once
REFUSAL_BACKOFF = {"first": 0.25, "most": 4.0, "forget": 30, "clients": 4096, "waiting": 256, "body_bytes": 64 << 10}
DEFAULT_CONCURRENCY = 4  # events of a group running at once, unless the group says otherwise
ATTENTION_CONCURRENCY = 4  # Show attention and the two-inputs record at once
GENERATE_CONCURRENCY = 4  # generations streaming at once
DRAW_CONCURRENCY = 8  # redraws of a heatmap or figure at once (widgets.ui.FAST) and the Model tab's description
ABLATION_CONCURRENCY = 4  # ablations of the Attention tab at once
IMPORTANCE_CONCURRENCY = 2  # head-importance sweeps at once (each evaluates the model once per head)
EXPORT_CONCURRENCY = 2  # exports of an attention record or a trained model at once
BESIDE_CONCURRENCY = 2  # the translation demo's comparison with Marian at once (two beam searches and a record)

# What a run may allocate or take
TRAINING_BYTES = 3 << 30  # the estimated peak of one training run (transformer.memory); more is refused. The
#                           largest run the Train tab's limits allow: 2.75 GiB for `dates` (its 34-token examples,
#                           measured 1.43 GiB), 1.99 GiB for a text, 1.77 GiB for the other tasks
GENERATION_BYTES = 512 << 20  # the estimated peak of one generation (transformer.memory.generation_bytes): every
#                           shipped model's largest fits (shakespeare-char, 8 beams of 400: 144 MiB); GPT-2 small
#                           greedy after a 1,024-token prompt fits (433 MiB), 8 beams of 400 tokens do not (3.4 GiB)
TRAINING = {"layers": (1, 4), "heads": (1, 8), "d_model": (16, 256), "lr": (1e-5, 1e-2), "steps": (10, 5000),
            "batch_size": (4, 256), "text_chars": 2_000_000, "min_text_chars": 2_000, "seconds": 300,
            "concurrent_trainings": 2, "updates_per_second": 2}  # the Train tab's request and its runs
TEXT_BLOCK = 64  # the context (positions) of a text model trained in the Train tab
COMPARE = {"steps": 1500, "seconds": 300, "seconds_per_variant": 100}  # one comparison: at most ~5 minutes
WATCH = {"steps": 3500, "eval_every": 50}  # seed 0: the induction score passes 0.5 at step 3300 (bench/RESULTS.md)
GPU_SECONDS_LIMIT = 120  # the daily ZeroGPU time of a visitor who is not logged in (Hub docs, "Usage tiers"):
#                          a request for more is refused for them, so no call asks for more
GPU_SECONDS_MARGIN = 15  # a training's wall-clock limit plus this: start-up, the last evaluation, handing back

# What the app keeps for everyone
STORED_MODELS = 48  # trained models kept for every browser together (each browser: its last MODELS_PER_BROWSER)
MODELS_PER_BROWSER = 3  # the Train tab says: "your last 3 models are kept"
EVICTED_NAMES_KEPT = 8  # names of a browser's evicted models remembered, to tell it what happened
BROWSERS_REMEMBERED = 4096  # browsers remembered without any model (counters, evicted names), oldest out first
SESSIONS = 256  # sessions whose state gradio keeps (up to ~0.4 MB each: its copy of the page's config, each
#                component's built when a call reads it, server.session_state), least recently used out first;
#                gradio's default, 10,000, let invented session ids hold about 4 GB
HELD_INPUTS = {"bytes": 64 << 20,  # what the input values all sessions hold may weigh together (server.held_inputs:
               #                    gradio keeps each input's last value per session; a figure sent to be saved as
               #                    HTML may be 16 MiB, a pasted text 2M characters): past it, the oldest go
               "counted": 4 << 10}  # a value from this size is counted (a typed prompt, 2,000 characters, is not)
CONFIGS_KEPT = 8  # the page's config as answered to `GET /config` for as many root URLs (server.config_cache: one
#                   for every client of a Space or of 127.0.0.1; a forged Host header's rebuilt, one at a time)
CONFIG_ROOTS = {"per_address_per_minute": 16,  # new roots an address may have built a minute (~70 ms of CPU each:
                #                                16 a minute are 2% of a core; loopback counts as one address)
                "waiting": 8,  # requests waiting for the one builder; past it, and past an address's budget: 429
                "addresses": 4096}  # addresses whose builds are counted, the oldest out first
EXPORTS_KEPT = 32  # exports (attention CSV/JSON, figure HTML, model zips) kept on disk for everyone together,
#                   room made from the client holding the most (store.exports)
EXPORTS_PER_BROWSER = 4  # a browser's last exports kept (its next removes its own oldest): one flooding browser
#                          never removes another's
SHIPPED_RECORDS = 64  # attention records of the shipped checkpoints, shared by everyone (a record is cut to 64
#                       tokens and holds its patterns only: the largest, translate-en-es's, is 0.64 MiB, so 64 hold
#                       at most 41 MiB; the q, k, v its views read are kept apart, tabs.attention.record.INSIDES)
BESIDE_KEPT = 16  # translations (ours and Marian's, with Marian's record) beside the translation model's heatmap
FIGURES_KEPT = 512  # drawn attention figures (tabs.attention.page)
LENSES_KEPT = 32  # logit-lens readings (tabs.attention.lens)
PATCHINGS_KEPT = 32  # patching grids and a head's partners (tabs.attention.patching)
FEATURE_READINGS_KEPT = 32  # an input's SAE features at a layer (tabs.attention.features): (T, F) floats, 128 KiB
SAES_KEPT = 16  # shipped SAEs loaded, with their stored contexts (store.saes): ~1 MiB each; 12 are shipped
UNEMBEDDINGS_KEPT = 3  # shipped models' unembeddings in float64 for features' logit effects (store.saes): 16 MiB for
#                        translate-en-es (8,000 x 256), a few KiB for the character models; 3 models ship SAEs
FEATURES_SHOWN = 8  # the features listed at a position, largest first (tabs.attention.features)
RECORD_CACHE_BYTES = 32 << 20  # what each cache of things computed from a record (store.record_cache: views, lenses,
#                            patchings) may hold in arrays and text, the records its entries keep alive included: a
#                            count does not bound them (a 2,000-character translate-en-es record is 0.64 MiB, its
#                            views 0.2 MiB each, its q, k, v 2.1 MiB; a GPT-2 small record 2.3 MiB, its q, k, v 7
#                            MiB): 40 such records' views, hundreds of a class's short inputs; also the records' q,
#                            k, v (tabs.attention.record.INSIDES: 15 long translate-en-es inputs, 4 of GPT-2 small)
FIGURES_BYTES = 96 << 20  # the same for the drawn figures: one of a long translate-en-es input is 0.2-1 MiB of JSON
#                           (a layer's grid the most), 27 of one record 18 MiB; a class's short inputs' ~20 KiB each
VIEWS_KEPT = 128  # what the heatmaps' views compute from a record (tabs.attention.views: each kind's value-weighted
#                   norms, each view's pattern, a verse's gold links); the default of store.record_cache.RecordCache
DISK_BYTES = 1 << 30  # the app's folder (gradio's cache: uploads, served files, exports); ATTENTION_LAB_DISK_BYTES
DISK_SWEEP_SECONDS = 30  # how often that budget is checked (and after every upload and download)
DELETE_CACHE = (600, 1800)  # gradio's own cache (files it serves): every 10 minutes, anything older than 30 minutes

# What a page draws
PATCHING = {"residual_cells": 512,  # residual patching: one patched forward per (layer, position); more is refused
            "true_heads": 128,  # heads patched one at a time up to this many; past it attribution patching
            #                     (one backward pass: GPT-2 small's 144 heads took 26x longer patched, bench/RESULTS.md)
            "path_cells": 384}  # path patching: (head, query/key/value) paths of one head, each way; more is refused
ATTENTION_CAP = 64  # tokens shown on a heatmap's axes
FIGURE_TABLE = {"cells": 4096, "columns": 64}  # a figure's "Show as a table": at most these cells and
#                   columns of each table (a 64 x 64 heatmap whole; the Positional tab's 512 x 512 table lists its first)
METRIC_NOTE_CHARS = 40  # a card's text value longer than this is a sentence: said under its table (tabs.model)
STREAM_UPDATES_PER_SECOND = 10  # generated text: redrawn at most this often while it streams
GENERATE = {"temperature": (0, 2), "top_k": (0, 50), "top_p": (0.05, 1), "num_beams": (1, 8),
            "max_new_tokens": (1, 400), "seed": (-1, 2**31 - 1)}  # the Generate tab's decoding controls
FILL_MASK_TOP = (1, 20)  # the Generate tab's fill the mask: how many tokens it lists per [MASK]
LEARNED_ROWS = 256  # positions of a learned table drawn beside the sinusoids (GPT-2 has 1024: the first ones show it)
POSITIONAL = {"d_model": (8, 512), "positions": (8, 512),  # the Positional tab's sliders; beyond the last three
              "d_k": (2, 256), "heads": (1, 16), "alibi_positions": (2, 32)}  # its figures stop being readable

# A class session (store.classes): a teacher's class, its students' devices and their answers, kept in the app's
# main process only while the class runs. 16 classes at once (a school's Space), 60 students each (the largest class
# a projector serves, with room for a few second devices); 100 questions a class (a lesson asks a dozen); an answer is
# one of a question's choices, at most 64 of them (a heatmap's keys: ATTENTION_CAP), each at most 80 characters; a
# wrong join code: 20 distinct a minute per address (a class typing, mistyping, then typing again; one code repeated,
# as by a class reloading an ended class's link, counts once), then the address waits
# out the minute, so 6 characters of 31 (887 million codes) with 16 classes take years to find by trying; a class
# idle 3 hours ends (a school day's lesson is shorter); the code box takes 16 characters (a code typed with spaces).
CLASS = {"classes": 16, "students": 60, "questions": 100, "choices": 64, "choice_chars": 80,
         "wrong_codes_per_minute": 20, "idle_seconds": 3 * 3600, "code_chars": 6, "code_typed": 16,
         "question_chars": 400, "addresses_remembered": 4096}
CLASS_POLL_SECONDS = 1.0  # how often a device in a class asks for what changed (an answer from the class record)

# How long the page waits on a figure after a demo (tabs.ask_first): a figure not changed this long after the demo's
# answer arrived is taken as it is (redraw_ms); the keyboard's focus is kept on a figure brought into view while it
# falls back to the page's body, this long after it first got there (focus_ms: a plot's element replaced), and it is
# tried on the figure until it can take it, at most this long (land_ms: a figure still hidden after Reveal on a busy page)
PAGE_WAITS = {"redraw_ms": 1500, "focus_ms": 2000, "land_ms": 60000}

# server.compat's probe (a page of its own, driven through gradio's queue at start): its event's line has one place
# (places), so a request waits while another runs; gradio's picking loop runs `turns` turns at a time (poll, pick,
# poll again): a count, never a time, so a busy machine cannot change the verdict
COMPAT_PROBE = {"places": 1, "turns": 3}
