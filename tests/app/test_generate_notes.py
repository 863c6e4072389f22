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
