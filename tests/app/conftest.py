import pytest

# gradio_client's HTTP calls (the config, joining the queue) give up after httpx's 5 s by default: on a loaded CI
# machine the app, in the test's own process, has been seen to answer later (httpx.ReadTimeout before any assertion)
HTTP_TIMEOUT_S = 60


@pytest.fixture
def client(app_url):
    """A fresh gradio_client session (its own gr.State) per test, on the app of the test process (tests/conftest.py)."""
    from gradio_client import Client

    return Client(app_url, verbose=False, httpx_kwargs={"timeout": HTTP_TIMEOUT_S})
