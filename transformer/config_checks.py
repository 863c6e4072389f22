"""The checks every config group's __post_init__ runs on its own fields: each raises ValueError starting with the
field's name (the app shows the message as it is)."""
from __future__ import annotations

import math


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # True is an int to Python, not a size


def positive_int(group, *names: str) -> None:
    for name in names:
        value = getattr(group, name)
        if not _integer(value) or value < 1:
            raise ValueError(f"{name}: must be a positive integer, got {value!r}")


def non_negative_int(group, *names: str) -> None:
    for name in names:
        value = getattr(group, name)
        if not _integer(value) or value < 0:
            raise ValueError(f"{name}: must be a non-negative integer, got {value!r}")


def flag(group, *names: str) -> None:
    for name in names:
        if not isinstance(getattr(group, name), bool):  # a truthy string or 1 is not a switch
            raise ValueError(f"{name}: must be true or false, got {getattr(group, name)!r}")


def one_of(group, name: str, choices: tuple[str, ...]) -> None:
    if getattr(group, name) not in choices:
        raise ValueError(f"{name}: must be one of {choices}, got {getattr(group, name)!r}")


def finite_above(group, name: str, low: float) -> None:
    """A finite real number > low (a string from a form, a bool, NaN or infinity is refused)."""
    value = getattr(group, name)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value <= low:
        raise ValueError(f"{name}: must be a finite number > {low:g}, got {value!r}")
