"""Start the real app (app.launch, as `python app.py` does) on 127.0.0.1 for the app-API and browser tests."""
from __future__ import annotations

import contextlib


@contextlib.contextmanager
def serve_app():
    """Yield the local URL of a running app; close it afterwards."""
    import app

    demo, (_, url, _) = app.launch(server_name="127.0.0.1", server_port=None, prevent_thread_lock=True, quiet=True)
    try:
        yield url
    finally:
        demo.close()


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
