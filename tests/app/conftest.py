import pytest

from tests.app_server import serve_app


@pytest.fixture(scope="module")
def app_url():
    with serve_app() as url:
        yield url


@pytest.fixture
def client(app_url):
    """A fresh gradio_client session (its own gr.State) per test."""
    from gradio_client import Client

    return Client(app_url, verbose=False)
