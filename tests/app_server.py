"""Start the real app (app.launch, as `python app.py` does) on 127.0.0.1 for the app-API and browser tests."""
from __future__ import annotations

import contextlib


UNREACHED = "localhost is not accessible"  # gradio's launch: the new server did not answer its one check in time


def launch_local(tries: int = 3):
    """(demo, url) of the app started on 127.0.0.1 on a free port. gradio's launch asks the new server for its page
    once, with a 3 s timeout, and gives up when a loaded machine (the suite runs in two processes) answers later: the
    app (closed by app.launch) is then started again, up to `tries` times."""
    import app

    for attempt in range(tries):
        try:
            demo, (_, url, _) = app.launch(server_name="127.0.0.1", server_port=None, prevent_thread_lock=True,
                                           quiet=True)
            return demo, url
        except ValueError as e:
            if UNREACHED not in str(e) or attempt == tries - 1:
                raise


@contextlib.contextmanager
def serve_demo():
    """Yield (demo, local URL) of a running app; close it afterwards."""
    demo, url = launch_local()
    try:
        yield demo, url
    finally:
        demo.close()


@contextlib.contextmanager
def serve_app():
    """Yield the local URL of a running app; close it afterwards."""
    with serve_demo() as (_, url):
        yield url


@contextlib.contextmanager
def serve_app_with_hub_cache(cache):
    """serve_app with HF_HUB_CACHE set to `cache` (a Hugging Face hub cache of test models): the app lists and
    loads the pretrained models found there. The catalogue's caches are cleared before and after."""
    import os

    from store import catalogue

    saved = os.environ.get("HF_HUB_CACHE")
    os.environ["HF_HUB_CACHE"] = str(cache)
    catalogue.pretrained.cache_clear()
    catalogue.pretrained_model.cache_clear()
    try:
        with serve_app() as url:
            yield url
    finally:
        if saved is None:
            os.environ.pop("HF_HUB_CACHE", None)
        else:
            os.environ["HF_HUB_CACHE"] = saved
        catalogue.pretrained.cache_clear()
        catalogue.pretrained_model.cache_clear()
