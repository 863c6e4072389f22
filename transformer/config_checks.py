"""The checks of the config groups' fields, as tables: each group lists {field: check} once, and `check_fields` runs
them. A check takes the field's name and value and raises ValueError starting with the name (the app shows the
message as it is). The rules that tie two fields together stay in the groups' own __post_init__."""
from __future__ import annotations

import math
from typing import Callable

Check = Callable[[str, object], None]


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # True is an int to Python, not a size


def _real(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)  # a string from a form, a bool: refused


def positive_int(name: str, value) -> None:
    if not _integer(value) or value < 1:
        raise ValueError(f"{name}: must be a positive integer, got {value!r}")


def non_negative_int(name: str, value) -> None:
    if not _integer(value) or value < 0:
        raise ValueError(f"{name}: must be a non-negative integer, got {value!r}")


def token_id(name: str, value) -> None:
    if not _integer(value) or value < 0:
        raise ValueError(f"{name}: must be a token id (an integer >= 0), got {value!r}")


def flag(name: str, value) -> None:
    if not isinstance(value, bool):  # a truthy string or 1 is not a switch
        raise ValueError(f"{name}: must be true or false, got {value!r}")


def probability(name: str, value) -> None:
    """A rate in [0, 1): dropout's P_drop."""
    if not _real(value) or not 0 <= value < 1:
        raise ValueError(f"{name}: must be in [0, 1), got {value!r}")


def one_of(choices: tuple[str, ...]) -> Check:
    def check(name: str, value) -> None:
        if value not in choices:
            raise ValueError(f"{name}: must be one of {choices}, got {value!r}")
    return check


def finite_above(low: float) -> Check:
    """A finite real number > low (NaN and infinity refused)."""
    def check(name: str, value) -> None:
        if not _real(value) or not math.isfinite(value) or value <= low:
            raise ValueError(f"{name}: must be a finite number > {low:g}, got {value!r}")
    return check


def optional(check: Check) -> Check:
    """`check`, or None (the field's "not set")."""
    return lambda name, value: None if value is None else check(name, value)


def check_fields(group, checks: dict[str, Check]) -> None:
    """Run each field's check of the table `checks` on `group`, in the table's order."""
    for name, check in checks.items():
        check(name, getattr(group, name))
