"""The server around the tabs, made safe in public: what app.py applies to the Blocks it built and adds to its
launch (server.admission, server.http_gate, store.disk, limits say what each part does)."""
from __future__ import annotations

import os
from pathlib import Path

import gradio as gr
from starlette.middleware import Middleware
from starlette.requests import Request

from limits import (BODIES_READ, BODY_BYTES, CONFIG_ROOTS, CONFIGS_KEPT, DISK_BYTES, DISK_SWEEP_SECONDS, LINK_CHARS,
                    QUERY_CHARS, SESSIONS, UPLOAD_BYTES)
from server import admission, analytics, compat, optional_modules, session_state, unqueued
from server.body_budget import BodyBudget
from server.config_cache import ConfigAnswers
from server.http_gate import RequestGate
from store import sessions
from store.disk import DiskBudget
from store.exports import EXPORTS
from store.memory import return_freed_memory

_BUDGETS: dict[str, DiskBudget] = {}


def disk_budget(demo: gr.Blocks) -> DiskBudget:
    """The budget of the folder gradio keeps its files in (uploads, served files, and the app's exports inside
    it): DISK_BYTES, or ATTENTION_LAB_DISK_BYTES when set; one per folder and process, swept on a daemon thread
    that also returns freed memory."""
    root = str(Path(demo.GRADIO_CACHE))
    if root not in _BUDGETS:
        Path(root).mkdir(parents=True, exist_ok=True)
        budget = _BUDGETS[root] = DiskBudget(Path(root), int(os.environ.get("ATTENTION_LAB_DISK_BYTES", DISK_BYTES)))
        budget.start(DISK_SWEEP_SECONDS, also=return_freed_memory)
    return _BUDGETS[root]


def export_readable(path: str, scope) -> bool:
    """Whether the request `scope` may be served the file `path`: not an export of another browser (store.exports;
    the browser is the request's cookie's, store.sessions.browser_key)."""
    return EXPORTS.readable(path, sessions.browser_key(Request(scope)))


def protect(demo: gr.Blocks) -> dict:
    """Put the admission checks on `demo` (after demo.queue(); app.launch checked first that gradio still behaves as
    they rely on: server.compat), keep its sessions at the page's size and its exports inside gradio's cache;
    returns the settings `demo.launch` needs: the upload limit, the sessions kept, the front-door middleware (and
    the page's config kept per root, server.config_cache) and no monitoring dashboard (server.analytics)."""
    optional_modules.remember_missing()
    admission.install(demo)
    unqueued.run_no_model(demo)  # an event answered outside the queue reads what is computed, never runs a model
    analytics.switch_off(demo._queue)
    # gradio's input preparation, wrapped here and only here, innermost first: the URL refusal runs before gradio
    # prepares (and would download) anything; the session tidy is outermost, so it runs after every preparation
    # (a refused one too) and sees the state exactly as gradio left it
    prepare = admission.refusing_urls(demo.preprocess_data)
    demo.preprocess_data = session_state.tidying(prepare, demo)
    budget = disk_budget(demo)
    EXPORTS.parent = budget.root
    gate = Middleware(RequestGate, max_body=BODY_BYTES, on_upload=budget.wrote, functions=demo.fns,
                      max_query=QUERY_CHARS, made_links=LINK_CHARS, may_read=export_readable,
                      bodies=BodyBudget(BODIES_READ["bytes"], BODIES_READ["counted"], BODIES_READ["wait_s"]))
    # behind the gate: what it refuses is never kept
    configs = Middleware(ConfigAnswers, kept=CONFIGS_KEPT, roots=CONFIG_ROOTS)
    return dict(max_file_size=UPLOAD_BYTES, state_session_capacity=SESSIONS,
                app_kwargs={"middleware": [gate, configs]}, **analytics.MONITORING)


def serving(demo: gr.Blocks) -> None:
    """What of the protection needs `demo`'s running server (call it after demo.launch: gradio makes its store of
    sessions there): new sessions cost no config of the whole page (server.session_state); the page served has
    what the app changed after the build (server.compat.check_served: GradioChanged otherwise)."""
    session_state.sessions_built_on_demand(demo)
    compat.check_served(demo)
