"""The Generate tab's notes (issue 19): a decoding loop is named, with the way out."""
from tabs.generate import repeats_itself


def test_a_loop_is_found_and_ordinary_text_is_not():
    """Invariant: the same 8 tokens three times is a loop ("the state of the senators of the sea" four times was
    the greedy output of shakespeare-char); text without a thrice-repeated 8-token run is not."""
    loop = list(b"the state of the senators of the sea " * 4)
    assert repeats_itself(loop)
    prose = list(b"To be, or not to be, that is the question: whether 'tis nobler in the mind to suffer")
    assert not repeats_itself(prose)
    assert not repeats_itself(list(b"noitnetta"))
    assert repeats_itself([1, 2, 3] * 3, n=3) and not repeats_itself([1, 2, 3] * 2, n=3)


def test_an_input_the_model_never_saw_gets_a_hint_of_what_it_expects(client):
    """Regression (issue 29, item 5): "Hello, how are you?" typed into `reverse` gave letters back and an `<unk>`
    notice, with no hint why. The notice now says what the model was trained on and what it expects (oracle: the
    task's own description in transformer.data.TASKS)."""
    from tests.app.test_app_api import generate
    from transformer.data import TASKS

    *_, notice = generate(client, "reverse", "Hello, how are you?")
    assert "`<unk>`" in notice and "synthetic task `reverse`" in notice
    assert TASKS["reverse"].description in notice and "lowercase letters a-z" in notice
    *_, notice = generate(client, "reverse", "hello")
    assert "Trained on" not in notice  # an input it knows gets no hint
