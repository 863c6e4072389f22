"""Property-based fuzz of every public endpoint through gradio_client: whatever a client sends, it gets a clear
error (a message, never the generic "raised an exception" of an unhandled one) or a valid result, and the server
still answers afterwards. Examples are bounded in number and time; traffic goes to 127.0.0.1 only."""
from __future__ import annotations

import math

import pytest
from gradio_client.exceptions import AppError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

GENERIC = "has not enabled verbose error reporting"
FUZZ = settings(max_examples=12, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

junk = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True),
                 st.text(max_size=50), st.lists(st.integers(), max_size=3))
texts = st.one_of(st.text(max_size=300), st.sampled_from(["", " ", "a" * 3000, "😀\x00\x07", "<s></s>"]), junk)
numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**40, 10**40), junk)
ckpts = st.one_of(st.sampled_from(["reverse", "shakespeare-char", "no-such", "../checkpoints/reverse"]), junk)


@pytest.fixture(scope="module")
def client(app_url):
    """A client of the app this test process serves (tests/conftest.py app_url): an app of the module's own gave
    no fresh state."""
    from tests.app_server import api_client

    return api_client(app_url)


def call(client, api_name, *args):
    """Send one request: a result or an AppError with a clear message passes; anything else fails the test."""
    try:
        return client.predict(*args, api_name=api_name)
    except AppError as e:
        assert GENERIC not in str(e), f"{api_name}{args!r:.300}: unhandled error on the server"
    except (ValueError, TypeError) as e:  # refused by gradio_client itself, before sending
        assert str(e)
    return None


def still_up(client):
    assert client.predict("reverse", "abc", "greedy", 1.0, 0, 1.0, 4, 10, 0, api_name="/generate")[0] == "cba"


@FUZZ
@given(ckpt=ckpts, prompt=texts, strategy=st.one_of(st.sampled_from(["greedy", "sample", "beam"]), junk),
       temperature=numbers, top_k=numbers, top_p=numbers, beams=numbers, max_new=numbers, seed=numbers)
def test_generate(client, ckpt, prompt, strategy, temperature, top_k, top_p, beams, max_new, seed):
    result = call(client, "/generate", ckpt, prompt, strategy, temperature, top_k, top_p, beams, max_new, seed)
    if result is not None:
        assert isinstance(result[0], str)
    call(client, "/inspect_step", 0)


@FUZZ
@given(ckpt=ckpts, text=texts, target=texts, kind=st.one_of(st.sampled_from(["cross", "decoder self"]), junk),
       layer=numbers, head=numbers, score=st.one_of(st.sampled_from(["entropy", "induction"]), junk))
def test_attention_and_redraw(client, ckpt, text, target, kind, layer, head, score):
    call(client, "/attention", ckpt, text, target)
    call(client, "/draw_attention", kind, layer, head, score)
    call(client, "/export_attention")


@FUZZ
@given(d_model=numbers, length=numbers, dims=texts, ckpt=ckpts)
def test_positional_and_model(client, d_model, length, dims, ckpt):
    call(client, "/positional", d_model, length, dims, ckpt)
    call(client, "/model", ckpt)
    call(client, "/example", ckpt)
    call(client, "/download_model", ckpt)


@FUZZ
@given(d_k=numbers, length=numbers, heads=numbers, causal=st.one_of(st.booleans(), junk))
def test_rope_and_alibi(client, d_k, length, heads, causal):
    call(client, "/rope", d_k, length)
    call(client, "/alibi", heads, length, causal)


@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(source=st.one_of(st.sampled_from(["task", "text"]), junk), task=st.one_of(st.sampled_from(["reverse"]), junk),
       text=texts, hub=st.one_of(st.sampled_from(["app.py", "/etc/passwd", "/proc/self/environ", "x" * 10_000]), junk),
       layers=numbers, steps=numbers, lr=numbers)
def test_train_refuses_or_trains(client, source, task, text, hub, layers, steps, lr):
    """Bounded: any request that validates trains at most 10 steps here (steps is clamped by the strategy)."""
    steps = 10 if isinstance(steps, (int, float)) and not isinstance(steps, bool) and math.isfinite(steps) \
        and 10 <= steps <= 5000 else steps
    call(client, "/train", source, task, text, None, hub, layers, 4, 32, lr, steps, 8)


def test_the_server_is_still_up_after_the_fuzz(client):
    still_up(client)


def test_a_client_cannot_name_a_server_file_as_an_upload(client):
    """A client never names a server path: an "upload" that points at a server file is refused by gradio."""
    with pytest.raises(AppError):
        client.predict("text", "reverse", "", {"path": "/etc/passwd", "meta": {"_type": "gradio.FileData"}}, "",
                       1, 4, 32, 3e-3, 10, 8, api_name="/train")
    still_up(client)
