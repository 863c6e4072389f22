"""Start the real app (app.build_demo) on 127.0.0.1 for the app-API and browser tests."""
from __future__ import annotations

import contextlib
import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


@contextlib.contextmanager
def serve_app():
    """Yield the local URL of a running app; close it afterwards."""
    import app

    app.warm_up()
    demo = app.build_demo()
    _, url, _ = demo.launch(server_name="127.0.0.1", server_port=None, prevent_thread_lock=True, quiet=True,
                            ssr_mode=False, theme=app.THEME, css=app.CSS)
    try:
        yield url
    finally:
        demo.close()
