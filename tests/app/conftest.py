import pytest


@pytest.fixture
def client(app_url):
    """A fresh gradio_client session (its own gr.State) per test, on the app of the test process (tests/conftest.py)."""
    from tests.app_server import api_client

    return api_client(app_url)
