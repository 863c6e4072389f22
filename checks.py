"""Input checks of the app's handlers: each bad value gets a UserError naming the field, shown to the user as it is
(widgets.errors.handler). No gradio here: the Train tab's request (tabs.train.request) uses them too."""
from __future__ import annotations

import math

from transformer.tokenization import unknown_characters
from visualize.text import markdown_text

from limits import MAX_PROMPT_CHARS



class UserError(ValueError):
    """Raised by handlers for bad input; shown to the user as it is."""


def check_text(text, what: str = "input", limit: int = MAX_PROMPT_CHARS) -> str:
    if text is not None and not isinstance(text, str):
        raise UserError(f"the {what} must be text")
    if text is None or not text.strip():
        raise UserError(f"the {what} is empty: type something first")
    if len(text) > limit:
        raise UserError(f"the {what} is {len(text):,} characters long; the limit here is {limit:,}")
    return check_characters(text, f"the {what}")


def check_characters(text: str, what: str) -> str:
    """`text` when every character of it is one (UTF-8 can write it); a lone UTF-16 surrogate, half of a pair that a
    client can send in JSON, gets a UserError naming `what` and where (no tokenizer can read it: tokenizers raises
    TypeError, and the reply that echoed it could not be encoded)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise UserError(f"{what} has a lone surrogate at character {e.start + 1} (half of a UTF-16 pair, not a "
                        f"character): remove it") from None
    return text


def real_number(value, what: str, lo: float | None = None, hi: float | None = None):
    """`value` when it is a finite real number; None, text, a bool, NaN, an infinity or a list get a UserError
    naming `what` (and the range [lo, hi], when given, as a hint). The one number check of the app: every control,
    handler and the Train tab's request go through it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        bounds = f" between {lo:g} and {hi:g}" if lo is not None and hi is not None else ""
        raise UserError(f"{what} must be a number{bounds}, got {str(value)[:40]!r}")
    return value


def check_number(value, what: str, lo: float, hi: float, integer: bool = False):
    """A number from a UI control, checked: finite, within [lo, hi], whole when `integer`; the error names it."""
    real_number(value, what, lo, hi)
    if not lo <= value <= hi:
        raise UserError(f"{what} must be between {lo:g} and {hi:g}, got {value:g}")
    if integer:
        if value != int(value):
            raise UserError(f"{what} must be a whole number, got {value:g}")
        return int(value)
    return float(value)


def check_index(value, what: str, size: int) -> int:
    """A layer, head, query or step from a slider: a whole number >= 0, clamped to size - 1 (a change sent just
    before a new record narrowed the range, head 6 of a model that now has 4, draws the last head, not an error)."""
    real_number(value, what)
    if value < 0 or value != int(value):
        raise UserError(f"{what} must be a whole number from 0, got {value:g}")
    return min(int(value), size - 1)


def check_choice(value, what: str, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        raise UserError(f"{what} must be one of {', '.join(map(str, choices))}; got {str(value)[:40]!r}")
    return value


def unknown_notice(tokenizer, text: str) -> str:
    unknown = unknown_characters(tokenizer, text)
    if not unknown:
        return ""
    return f"Characters this model never saw became `<unk>`: {markdown_text(' '.join(repr(c) for c in unknown))}. "
