"""An event answered outside the queue (queue=False: a class's poll, answer and push, Stop, the page's quick steps)
runs no model (server.unqueued): it waits in none of the fair lines, so a model's run there would take the CPU
from the requests waiting their turn. Issue 39, what was left, item 2."""
from __future__ import annotations

import inspect

import pytest
from gradio_client.exceptions import AppError

from server.unqueued import WHY, unqueued
from store.gpu import ModelRefused, gpu, no_model
from tests.app.test_class_session_in_app import PUSH
from tests.app.test_class_views import passes  # noqa: F401  (the fixture)
from tests.app_server import api_client, running_app


def test_a_gpu_function_refuses_to_start_inside_no_model_and_runs_outside(monkeypatch):
    """Oracle: the function's own body, which records each call. (Registered in a copy of the registry: the app's
    own set of @gpu functions is checked elsewhere.)"""
    import store.gpu

    monkeypatch.setattr(store.gpu, "GPU_FUNCTIONS", dict(store.gpu.GPU_FUNCTIONS))
    ran = []

    @gpu(duration=1)
    def computed(x):
        ran.append(x)
        return 2 * x

    @gpu(duration=1)
    def streamed(n):
        ran.append(n)
        yield from range(n)

    with no_model("not here"):
        with pytest.raises(ModelRefused, match="not here"):
            computed(3)
        with pytest.raises(ModelRefused, match="not here"):
            list(streamed(2))
    assert ran == [] and computed(3) == 6 and list(streamed(2)) == [0, 1] and ran == [3, 2]


def test_every_event_outside_the_queue_runs_inside_no_model(app_url):
    """Invariant over the whole app: each such event's function is wrapped (found by its mark), and the class's
    events are among them (not vacuous). Failed before: none was."""
    found = unqueued(running_app())
    assert all(getattr(fn.fn, "runs_no_model", False) for fn in found), \
        [fn.name for fn in found if not getattr(fn.fn, "runs_no_model", False)]
    names = {fn.api_name for fn in found}
    assert {"class_poll", "class_push", "class_answer", "class_join", "class_reveal", "stop"} <= names


def test_a_push_whose_figure_needs_the_model_again_is_refused_in_words_and_runs_none(app_url, passes,  # noqa: F811
                                                                                      monkeypatch):
    """The value-weighted norms of the teacher's head, dropped from the app's caches (as a busy app's bounded
    caches drop them), would need a forward pass to draw the pushed figure: the push says so in words and runs no
    model. Failed before: the push ran the model (reverse: its encoder and decoder) outside the queue."""
    from store.record_cache import RecordCache
    from tabs.attention import figure_cache, views

    teacher = api_client(app_url)
    code = teacher.predict("", api_name="/class_start")[0]
    teacher.predict("reverse", "attention", "", api_name="/attention")
    teacher.predict("cross", 1, 2, "anti-diagonal", "value-weighted norms", False, api_name="/draw_attention")
    monkeypatch.setattr(views, "VIEWS", RecordCache(views.VIEWS.size))
    monkeypatch.setattr(figure_cache, "FIGURES", type(figure_cache.FIGURES)(figure_cache.FIGURES.size,
                                                                          figure_cache.FIGURES.max_bytes))
    passes.clear()
    with pytest.raises(AppError, match="needs a model to run"):
        teacher.predict(code, "cross", 1, 2, "value-weighted norms", False, "anti-diagonal", *PUSH[6:],
                        api_name="/class_push")
    assert passes == []
    assert WHY.startswith("this needs a model to run")
    teacher.predict(code, api_name="/class_end")


def test_no_class_state_enters_a_gpu_call(app_url):
    """Issue 39 (ZeroGPU: a @spaces.GPU call runs in a fork, where a class's record would be a copy that is lost):
    every event of the Class tab runs outside the queue, so inside no_model, where no @gpu function starts; and no
    @gpu function's module holds the class registry. Oracle: the app's own events and GPU_FUNCTIONS."""
    import sys

    from store.classes import CLASSES
    from store.gpu import GPU_FUNCTIONS

    classroom = [fn for fn in running_app().fns.values() if fn.fn is not None
                 and inspect.unwrap(fn.fn).__module__.startswith("tabs.classroom")]
    assert len(classroom) >= 10 and all(getattr(fn.fn, "runs_no_model", False) for fn in classroom)
    assert not [name for name, fn in GPU_FUNCTIONS.items()
                if any(value is CLASSES for value in vars(sys.modules[fn.__module__]).values())]
