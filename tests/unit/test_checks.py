"""checks.py, the one number check of the app (controls, handlers and the Train tab's request use it)."""
from __future__ import annotations

import math

import pytest

from checks import UserError, check_index, check_number, real_number


@pytest.mark.parametrize("value", [None, "2", True, math.nan, math.inf, -math.inf, [2], {"x": 1}])
def test_anything_but_a_finite_number_is_refused_naming_the_field(value):
    """Invariant: None, text, a bool, NaN, infinities and containers are refused with the field's name (and the
    range as a hint); a UserError is a ValueError, so the library's callers and the app's handler both catch it."""
    with pytest.raises(UserError, match=r"^Layers must be a number between 1 and 4, got "):
        real_number(value, "Layers", 1, 4)
    with pytest.raises(ValueError, match=r"^layer must be a number, got "):
        check_index(value, "layer", 3)


def test_check_number_keeps_range_and_whole_numbers():
    """Oracle: by hand, 3 in [1, 4] is 3 (an int when integer), 2.5 is a float, 5 is out of range, 2.5 is not
    whole; a value equal to a bound is accepted."""
    assert check_number(3.0, "layers", 1, 4, integer=True) == 3 and isinstance(check_number(3.0, "x", 1, 4, True), int)
    assert check_number(2.5, "lr", 1, 4) == 2.5
    assert check_number(4, "layers", 1, 4, integer=True) == 4
    with pytest.raises(UserError, match="layers must be between 1 and 4, got 5"):
        check_number(5, "layers", 1, 4)
    with pytest.raises(UserError, match="layers must be a whole number, got 2.5"):
        check_number(2.5, "layers", 1, 4, integer=True)


def test_check_index_clamps_to_the_last_and_refuses_what_no_slider_sends():
    """Oracle: an index past the end is the last one (a change sent before a record narrowed the range), 0..size-1
    pass unchanged, a negative or fractional index is refused."""
    assert [check_index(i, "head", 4) for i in (0, 3, 6, 10_000_000)] == [0, 3, 3, 3]
    with pytest.raises(UserError, match="head must be a whole number from 0, got -1"):
        check_index(-1, "head", 4)
    with pytest.raises(UserError, match="head must be a whole number from 0, got 1.5"):
        check_index(1.5, "head", 4)
