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
