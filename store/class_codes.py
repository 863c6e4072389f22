"""A class's join code and who may try one (issue 39): the code's alphabet, a typed code as the registry keeps it,
and the wrong codes each address tried in the last minute. No gradio here.

A join code is CLASS["code_chars"] characters of an alphabet without look-alikes (no 0/O, 1/I/L), from `secrets`:
short enough to type on a phone. It cannot be found by trying: a wrong code is said in words and counted per address
(store.clients: a school behind one NAT is one address; loopback and an unknown address count per browser), and
past CLASS["wrong_codes_per_minute"] distinct wrong codes in a minute every other code (the right one too) from that
address waits out the minute. The same wrong code again counts once: a class behind one NAT reloading the link of a
class that ended (or ran before a restart) is told so, each student, and can join the new code at once.

A browser is known to a class by the SHA-256 of its key (browser_hash), never by the key itself."""
from __future__ import annotations

import hashlib
import secrets
from collections import OrderedDict

from checks import UserError
from limits import CLASS

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # 31 characters a phone's keyboard and a projector cannot confuse


def browser_hash(key: str) -> str:
    """What a class keeps of a browser's key: its SHA-256 (the key is the teacher's secret)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def normal_code(code) -> str:
    """A typed code as the registry keeps it: capitals, spaces and dashes left out (a phone capitalises nothing)."""
    if not isinstance(code, str):
        raise UserError("the class code must be text")
    return "".join(c for c in code[: 2 * CLASS["code_typed"]].upper() if c not in " -\t")


def shown_code(typed: str, empty: str) -> str:
    """A typed code as a message repeats it: a little longer than a code at most, `empty` when nothing was typed."""
    return typed[:CLASS["code_chars"] + 2] or empty


def new_code(taken) -> str:
    """A fresh code, none of `taken`."""
    while True:
        code = "".join(secrets.choice(ALPHABET) for _ in range(CLASS["code_chars"]))
        if code not in taken:
            return code


class WrongCodes:
    """The distinct wrong codes each address tried in the last minute, when each was last tried; the addresses
    remembered are bounded (CLASS["addresses_remembered"], the least recent forgotten first). Not thread-safe: the
    registry (store.classes) calls it under its lock."""

    def __init__(self):
        self._tried: OrderedDict[str, OrderedDict[str, float]] = OrderedDict()  # address -> {code: when}, oldest
        #                                                                        first

    def refuse_guessing(self, who: str, code: str, now: float) -> None:
        """Refuse in words when `who` tried CLASS["wrong_codes_per_minute"] distinct wrong codes in the last minute
        and `code` is not one of them (the right code too waits out the minute)."""
        wrong = self._tried.get(who)
        while wrong and now - next(iter(wrong.values())) > 60:  # the last minute
            wrong.popitem(last=False)
        if wrong is not None and code not in wrong and len(wrong) >= CLASS["wrong_codes_per_minute"]:
            wait = max(1, int(60 - (now - next(iter(wrong.values())))) + 1)
            raise UserError(f"{len(wrong)} wrong class codes came from your network in the last minute: wait "
                            f"{wait} s, then type the code on the projector again")

    def count(self, who: str, code: str, now: float) -> None:
        """A wrong `code` from `who`: the same code again counts once (a class reloading the link of a class that
        ended is no guess), its time renewed."""
        codes = self._tried.setdefault(who, OrderedDict())
        codes.pop(code, None)
        codes[code] = now
        self._tried.move_to_end(who)
        while len(self._tried) > CLASS["addresses_remembered"]:
            self._tried.popitem(last=False)

    def clear(self) -> None:
        self._tried.clear()
