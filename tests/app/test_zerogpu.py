"""The app is ready for a ZeroGPU Space and, with `spaces` installed, behaves here exactly as without it.

Three properties: every model forward any endpoint makes runs inside a @gpu function (store.gpu); on this machine
those functions are the undecorated ones and give what the library gives; and the app still works when each @gpu
call runs as ZeroGPU runs it: in one long-lived fork of the app, forked before any model was trained, with
arguments and results pickled across (a simulation of spaces' worker, without a GPU).
"""
from __future__ import annotations

import importlib.metadata
import inspect
import math
import multiprocessing
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import torch

from store.gpu import GPU_FUNCTIONS, GPU_SECONDS_LIMIT, _capped, on_zero_gpu
from tests.app.test_app_api import decode, plot_json
from tests.app_server import api_client, streaming

ROOT = Path(__file__).resolve().parents[2]
TINY_TRAIN = ("task", "reverse", "", None, "", 1, 4, 32, 3e-3, 30, 8)
# Every endpoint of the app with arguments that make it do its work; an endpoint missing here fails
# test_every_model_forward_runs_inside_a_gpu_function, so a new one is checked too.
ENDPOINTS = [
    ("/attention", ("reverse", "watchingforwards", "")),  # an input no other test sends: not in the shared cache
    ("/draw_attention", ("cross", 1, 0, "anti-diagonal", "value-weighted norms", True)),
    ("/head_caption", ("cross", 1, 0, "value-weighted norms", False)),
    ("/view_link", ("cross", 1, 0, "weights", False, "entropy", "lens", 0, 1, "", "", -1)),  # runs no model: the link's query
    ("/logit_lens", (1,)),
    ("/what_heads_write", ("cross", 0, 1, "")),  # reverse ships no SAE: the section says so, no model run
    ("/feature_strip", ("cross", 0, 1, "0")),  # refused in words: no SAE
    ("/compare_inputs", ("watchingbackward",)),  # as long as /attention's input: /patching runs the pair
    ("/draw_two_inputs", ("cross", 1, 0)),
    ("/patching", ("cross", 1, 0, "", "", -1)),
    ("/draw_qk", ("cross", 1, 0, 2)),
    ("/draw_rollout", ("encoder self",)),
    ("/ablate", ("cross", ["1.0"])),
    ("/head_importance", ("cross",)),
    ("/export_attention", ()),
    ("/generate", ("reverse", "hello", "sample", 0.8, 0, 1.0, 1, 10, 7)),
    ("/inspect_step", (2,)),
    ("/example", ("reverse",)),
    ("/fill_mask", ("reverse", "a [MASK] b", 5)),  # not encoder-only: the notice, no model run
    ("/positional", (64, 50, "0, 1", "reverse")),
    ("/rope", (16, 32)),
    ("/alibi", (4, 12, True)),
    ("/model", ("reverse",)),
    ("/train", TINY_TRAIN),
    ("/compare_variants", ("task", "reverse", "", None, "", 1, 4, 32, 3e-3, 10, 8, "kv-heads")),
    ("/watch_induction", ()),
    ("/stop", ()),
    ("/download_model", ("my reverse model #1",)),
]


def gpu_functions():
    """{registered name: the module attribute the app calls}."""
    return {name: getattr(sys.modules[fn.__module__], name.rsplit(".", 1)[1]) for name, fn in GPU_FUNCTIONS.items()}


def call(client, api, args):
    if api == "/watch_induction":  # a run of minutes: stopped once it streams updates from its training
        job = client.submit(*args, api_name=api)
        streaming(job, 3)
        client.predict(api_name="/stop")
        return list(job)[-1] if job.outputs() else None
    if api in ("/train", "/compare_variants", "/generate"):
        return list(client.submit(*args, api_name=api))[-1]
    return client.predict(*args, api_name=api)


def test_spaces_is_installed_pinned_and_a_no_op_here():
    """`spaces` is a requirement (the version requirements.txt pins); off ZeroGPU its decorator returns each function
    itself, so every @gpu function the app calls is the undecorated one (behind the no-model check); every GPU
    time asked is within the limit."""
    import spaces

    pinned = re.search(r"^spaces==([^\s;#]+)", (ROOT / "requirements.txt").read_text(), re.M)
    assert pinned and importlib.metadata.version("spaces") == pinned.group(1)
    assert callable(spaces.GPU) and not on_zero_gpu()
    import app  # noqa: F401  (imports every tab, so every @gpu function is registered)

    assert set(GPU_FUNCTIONS) == {
        "tabs.attention.record.record_on_gpu", "tabs.attention.record.inside_on_gpu", "tabs.attention.inside.qk_on_gpu",
        "tabs.attention.inside.ablation_on_gpu", "tabs.attention.inside.importance_on_gpu",
        "tabs.generation.generate_on_gpu", "tabs.generate.step_on_gpu", "tabs.fill_mask.fill_mask_on_gpu",
        "tabs.train.page.train_on_gpu",
        "tabs.train.page.compare_on_gpu", "tabs.attention.views.norms_on_gpu", "tabs.attention.lens.lens_on_gpu",
        "tabs.train.watch.watch_on_gpu", "tabs.attention.patching.grids_on_gpu",
        "tabs.attention.patching.head_on_gpu", "tabs.attention.features.reading_on_gpu",
        "tabs.attention.features.active_on_gpu"}
    # behind store.gpu's check that no model runs where none may (server.unqueued), the undecorated function
    assert all(gpu_functions()[name].__wrapped__ is fn for name, fn in GPU_FUNCTIONS.items())
    assert _capped(600) == GPU_SECONDS_LIMIT and _capped(lambda n: 2 * n)(7) == 14
    assert _capped(lambda n: 2 * n)(1000) == GPU_SECONDS_LIMIT


def test_every_model_forward_runs_inside_a_gpu_function(app_url, monkeypatch):
    """Invariant: through every endpoint of the app, each pass through a Transformer (forward, encode, decode: the
    KV-cached decoding calls the last two) happens with a @gpu function on the stack (on ZeroGPU, with a GPU
    attached); the endpoints that compute make such passes, so this is not vacuous."""
    from transformer.model import Transformer

    bodies = {inspect.unwrap(fn).__code__ for fn in GPU_FUNCTIONS.values()}
    forwards, outside, lock, current = [], [], threading.Lock(), [None]

    def watch(original):
        def watched(self, *args, **kwargs):
            frame, inside = sys._getframe(1), False
            while frame is not None and not inside:
                inside, frame = frame.f_code in bodies, frame.f_back
            with lock:
                forwards.append(current[0])
                if not inside:
                    outside.append((current[0], original.__name__, [f.function for f in inspect.stack()[1:12]]))
            return original(self, *args, **kwargs)
        return watched

    for method in ("forward", "encode", "decode"):
        monkeypatch.setattr(Transformer, method, watch(getattr(Transformer, method)))
    client = api_client(app_url)
    published = set(client.view_api(print_info=False, return_format="dict")["named_endpoints"])
    assert published == {api for api, _ in ENDPOINTS}, "an endpoint was added or removed: list it in ENDPOINTS"
    for api, args in ENDPOINTS:
        current[0] = api
        if api == "/stop":
            continue  # nothing is training: it only refuses
        call(client, api, args)
    assert outside == []
    made = set(forwards)  # /draw_qk makes none: it reads the q, k, v /draw_attention's norms made (record.INSIDES)
    assert {"/attention", "/ablate", "/head_importance", "/generate", "/inspect_step", "/train",
            "/compare_variants", "/draw_attention", "/logit_lens", "/watch_induction", "/patching"} <= made
    assert "/draw_qk" not in made


def test_the_gpu_functions_give_what_the_library_gives():
    """Oracle: called as the app calls them, the heatmap's record, a sampled generation (seeded) and a tiny
    training run equal the library's own results for the same inputs."""
    from tabs.attention.record import record_on_gpu
    from store.catalogue import ModelRef, shipped_model
    from tabs.generation import generate_on_gpu
    from tabs.train.page import train_on_gpu
    from tabs.train.stop_signal import StopSignal
    from tabs.train.request import TrainingRequest
    from tabs.train.session import train_stream
    from transformer.generate import generate
    from transformer.interpretability.probe import encode_input, record_attention

    model, tok, _ = shipped_model("reverse")
    record, expected = record_on_gpu(ModelRef("reverse"), "attention", ""), record_attention(model, tok, "attention")
    assert record.kinds == expected.kinds
    assert all(torch.equal(record.patterns[k].weights, expected.patterns[k].weights) for k in record.kinds)

    decoding = dict(strategy="sample", temperature=0.9, top_k=None, top_p=None, num_beams=1, max_new_tokens=12, seed=3)
    text = list(generate_on_gpu(ModelRef("reverse"), "reverse", "k", "hello", dict(decoding)))[-1][0]
    steps = generate(model, encode_input(model, tok, "hello").ids, decoding.pop("max_new_tokens"), **decoding)
    assert text == tok.decode(s.token_id for s in steps)

    request = TrainingRequest("task", "reverse", None, None, None, 1, 2, 16, 3e-3, 12, 4).validated()
    runs = [list(train(request, None, StopSignal())) for train in (train_on_gpu, train_stream)]
    last, oracle = runs[0][-1], runs[1][-1]
    assert last.outcome == oracle.outcome == "finished" and last.step == oracle.step == 12
    assert all(torch.equal(a, b) for a, b in zip(last.model.state_dict().values(),
                                                oracle.model.state_dict().values()))


class ForkedGPUWorker:
    """spaces.GPU on ZeroGPU, without a GPU: each call of a @gpu function runs in one long-lived fork of the app
    (made before any model is trained, as a reused ZeroGPU worker is), its arguments and what it returns or yields
    pickled across by the multiprocessing queues spaces uses; nothing it changes in memory comes back."""

    def __init__(self):
        ctx = multiprocessing.get_context("fork")
        self.calls, self.results, self.lock = ctx.SimpleQueue(), ctx.SimpleQueue(), threading.Lock()
        self.count: dict[str, int] = {}
        self.process = ctx.Process(target=self._serve, daemon=True)
        self.process.start()

    def _serve(self):
        torch.set_num_threads(1)  # a fork keeps no thread pool
        while (message := self.calls.get()) is not None:
            name, args, kwargs = message
            fn = GPU_FUNCTIONS[name]
            try:
                if inspect.isgeneratorfunction(fn):
                    for item in fn(*args, **kwargs):
                        self.results.put(("item", item))
                    self.results.put(("end", None))
                else:
                    self.results.put(("value", fn(*args, **kwargs)))
            except Exception as e:  # noqa: BLE001  (sent back and raised there, as spaces does)
                self.results.put(("error", e))

    def remote(self, name):
        def send(args, kwargs):
            self.count[name] = self.count.get(name, 0) + 1
            self.calls.put((name, args, kwargs))

        if inspect.isgeneratorfunction(GPU_FUNCTIONS[name]):
            def streamed(*args, **kwargs):
                with self.lock:
                    send(args, kwargs)
                    while (answer := self.results.get())[0] == "item":
                        yield answer[1]
                    if answer[0] == "error":
                        raise answer[1]
            return streamed

        def called(*args, **kwargs):
            with self.lock:
                send(args, kwargs)
                kind, value = self.results.get()
            if kind == "error":
                raise value
            return value
        return called

    def close(self):
        self.calls.put(None)
        self.process.join(timeout=10)


@pytest.fixture
def forked_gpu(monkeypatch):
    import app  # noqa: F401  (every @gpu function registered, and shipped models loaded before the fork)
    from store.catalogue import SHIPPED, shipped_model

    for name in SHIPPED:
        shipped_model(name)
    worker = ForkedGPUWorker()
    for name, fn in GPU_FUNCTIONS.items():
        monkeypatch.setattr(sys.modules[fn.__module__], name.rsplit(".", 1)[1], worker.remote(name))
    from tabs.attention import record
    record.SHARED_RECORDS.clear()
    yield worker
    worker.close()
    record.SHARED_RECORDS.clear()


def test_the_app_works_when_gpu_calls_run_in_a_forked_worker(forked_gpu, app_url):
    """As on ZeroGPU: a model trained in the worker joins the app's store, and the worker, forked before that
    model existed, draws its attention and generates with it (it travels with the call), equal to the same
    computations in the app's process; Stop reaches a run in the worker and its model is kept; an error raised
    in the worker arrives with its message."""
    import gradio as gr

    from tabs.attention import inside, record as attention
    from store.catalogue import USER_MODELS, ModelRef
    from transformer.generate import generate
    from transformer.interpretability.probe import encode_input, record_attention

    client = api_client(app_url)
    final = list(client.submit(*TINY_TRAIN, api_name="/train"))[-1]
    assert "finished" in final[1] and "my reverse model #1" in [c[0] for c in final[4]["choices"]]
    model, tok, _ = USER_MODELS.get(f"session:{client.session_hash}", "my reverse model #1")

    client.predict("my reverse model #1", "abcd", "", api_name="/attention")
    one, *_ = client.predict("cross", 0, 1, "entropy", api_name="/draw_attention")
    expected = record_attention(model, tok, "abcd").patterns["cross"].weights[0, 1]  # (T, S)
    drawn = decode(plot_json(one)["data"][0]["z"])
    assert all(math.isclose(a, b, abs_tol=1e-6) for row, want in zip(drawn, expected.tolist())
               for a, b in zip(row, want))
    text = list(client.submit("my reverse model #1", "abcd", "greedy", 1.0, 0, 1.0, 1, 10, 0,
                              api_name="/generate"))[-1][0]
    assert text == tok.decode(s.token_id for s in generate(model, encode_input(model, tok, "abcd").ids, 10))

    job = client.submit("task", "reverse", "", None, "", 1, 4, 32, 3e-3, 5000, 8, api_name="/train")
    streaming(job, 3)  # "Starting", then updates from the worker
    client.predict(api_name="/stop")
    for _ in job:
        pass
    status = job.outputs()[-1][1]
    assert "Training stopped" in status and "my reverse model #2" in status
    assert USER_MODELS.get(f"session:{client.session_hash}", "my reverse model #2") is not None

    record = attention.record_on_gpu(ModelRef("reverse"), "abc", "")
    with pytest.raises(gr.Error, match="this pattern has 2 layers"):
        inside.qk_on_gpu(ModelRef("reverse"), record, attention.inside_on_gpu(ModelRef("reverse"), record), "cross", 9,
                         0, 0)
    assert forked_gpu.count["tabs.train.page.train_on_gpu"] == 2
    assert forked_gpu.count["tabs.attention.record.record_on_gpu"] >= 2
    assert forked_gpu.count["tabs.generation.generate_on_gpu"] == 1


def test_models_load_at_import_on_a_gpu_and_on_first_use_on_a_cpu():
    """Invariant of store.catalogue.load_at_start, in a fresh process: importing the app loads every shipped model when
    there is a GPU (ZeroGPU takes the weights it finds on CUDA at start), and none on a CPU (a fast start)."""
    probe = ("import torch, app; from store.catalogue import SHIPPED, shipped_model; "
             "print(shipped_model.cache_info().currsize, len(SHIPPED), "
             "{shipped_model(n)[0].device.type for n in SHIPPED} if torch.cuda.is_available() else '')")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    loaded, shipped, *devices = out.stdout.split(maxsplit=2)
    assert int(shipped) >= 4
    assert int(loaded) == (int(shipped) if torch.cuda.is_available() else 0), out.stderr[-2000:]
    if torch.cuda.is_available():
        assert devices == ["{'cuda'}"]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_the_app_computes_and_trains_there():
    """With CUDA: the shipped models are on it, a heatmap's record is computed there (returned on the CPU, ready to
    draw), and a Train-tab run trains on it, with bf16 autocast exactly where transformer.train.bf16_pays says."""
    from tabs.attention.record import record_on_gpu
    from store.catalogue import ModelRef, shipped_model
    from tabs.train.page import train_on_gpu
    from tabs.train.stop_signal import StopSignal
    from tabs.train.request import TrainingRequest
    from transformer.train import bf16_pays

    assert shipped_model("reverse")[0].device.type == "cuda"
    record = record_on_gpu(ModelRef("reverse"), "attention", "")
    assert record.patterns["cross"].weights.device.type == "cpu"
    for d_model in (32, 256):
        request = TrainingRequest("task", "reverse", None, None, None, 1, 4, d_model, 3e-3, 10, 4).validated()
        last = list(train_on_gpu(request, None, StopSignal()))[-1]
        assert last.model.device.type == "cuda"
        assert last.info["training"]["bf16"] == bf16_pays(d_model, torch.device("cuda"))
