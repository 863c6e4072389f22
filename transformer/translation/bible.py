"""The English-Spanish Bible corpus: verse pairs from two public-domain SWORD modules, with gold word links.

English: the World English Bible (Debian `sword-text-web`, module engWEB2015eb, NRSVA versification).
Spanish: the Reina-Valera 1909 (Debian `sword-text-sparv`, module spaRV1909eb, KJV versification).
Both tag words with Strong's numbers (`<w lemma="strong:G2316">God</w>`, `<w lemma="strong:G2316">Dios</w>`):
an English and a Spanish word that carry the same number translate the same original word, which gives gold
word alignments for free.

`osis_words` turns one verse's OSIS markup into words (whitespace-separated, punctuation kept on its word), each
with the Strong's numbers it carries; `read_pairs` walks the KJV references, looks each up in both modules and keeps
the verses both have; `verse_links` links word i of `en` and word j of `es` that share a Strong's number.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

SWORD_PATH = Path("/usr/share/sword")
ENGLISH, SPANISH = "engWEB2015eb", "spaRV1909eb"
PACKAGES = "sword-text-web and sword-text-sparv"
VERSIFICATION = "kjv"  # the references walked: those of the Spanish module's scheme, looked up in both

TAG = re.compile(r"(<[^>]*>)")
STRONG = re.compile(r"strong:([GH])0*(\d+)")
SKIPPED = ("note",)  # footnotes are inline: dropped whole, content included
# Tags that separate words: removing them must leave a space ("God<note>..</note><w>created</w>" -> "God created").
SEPARATING = ("note", "div", "chapter", "p", "lb", "l", "lg", "title", "milestone", "verse", "br")
CLOSING_PUNCTUATION = set(",.;:!?)]»”’")
OPENING_PUNCTUATION = set("([«“‘¿¡")


class CorpusMissing(RuntimeError):
    """The SWORD modules are not installed; the message names the Debian packages."""


@dataclass(frozen=True)
class Word:
    text: str
    strongs: frozenset[str]


@dataclass(frozen=True)
class VersePair:
    verse: str  # OSIS id, e.g. "John.3.16"
    en: str
    es: str
    links: tuple[tuple[int, int], ...]  # (i, j): word i of `en` and word j of `es` (whitespace words, 0-based)

    def links_text(self) -> str:
        return " ".join(f"{i}-{j}" for i, j in self.links)


def _tag_name(tag: str) -> str:
    m = re.match(r"</?\s*([A-Za-z]+)", tag)
    return m.group(1).lower() if m else ""


def osis_words(markup: str) -> list[Word]:
    """The words of one verse's OSIS markup, each with the Strong's numbers of the <w> elements it lies in.

    Footnotes (<note>...</note>) and non-canonical headings (<title>) are dropped whole; a chapter's end milestone
    ends the verse (the WEB appends its glossary after Rev 22:21's). Punctuation that tag removal leaves on its own
    ("world ,") is put back on its word."""
    chars: list[tuple[str, frozenset[str]]] = []
    skip_depth, lemmas = 0, []  # lemmas: the Strong's numbers of each open <w>
    for piece in TAG.split(markup):
        if not piece:
            continue
        if piece.startswith("<"):
            name, closing, empty = _tag_name(piece), piece.startswith("</"), piece.endswith("/>")
            if name == "chapter" and "eID" in piece:
                break
            if name in SKIPPED or (name == "title" and 'canonical="true"' not in piece):
                if not empty:
                    skip_depth += -1 if closing else 1
                    skip_depth = max(skip_depth, 0)
            elif name == "w" and not empty:
                if closing:
                    if lemmas:
                        lemmas.pop()
                else:
                    lemmas.append(frozenset(f"{g}{int(n)}" for g, n in STRONG.findall(piece)))
            if name in SEPARATING:
                chars.append((" ", frozenset()))
            continue
        if skip_depth:
            continue
        current = frozenset().union(*lemmas) if lemmas else frozenset()
        chars.extend((c, current) for c in piece)
    return _split_words(chars)


def _split_words(chars: list[tuple[str, frozenset[str]]]) -> list[Word]:
    raw: list[tuple[str, frozenset[str]]] = []
    text, strongs = [], set()
    for c, s in chars + [(" ", frozenset())]:
        if c.isspace():
            if text:
                raw.append(("".join(text), frozenset(strongs)))
            text, strongs = [], set()
        else:
            text.append(c)
            strongs |= s
    words: list[Word] = []
    pending = ""  # opening punctuation waiting for its word
    for text, strongs in raw:
        if all(c in CLOSING_PUNCTUATION for c in text) and words:
            words[-1] = Word(words[-1].text + text, words[-1].strongs)
        elif all(c in OPENING_PUNCTUATION for c in text):
            pending += text
        else:
            words.append(Word(pending + text, strongs))
            pending = ""
    if pending and words:
        words[-1] = Word(words[-1].text + pending, words[-1].strongs)
    return words


def verse_links(en: list[Word], es: list[Word]) -> tuple[tuple[int, int], ...]:
    """(i, j) for every English word i and Spanish word j that carry a common Strong's number."""
    return tuple((i, j) for i, e in enumerate(en) if e.strongs for j, s in enumerate(es) if e.strongs & s.strongs)


def plausible(en: list[Word], es: list[Word]) -> bool:
    """Both verses non-empty and of comparable length (a verse that the two versifications split differently
    leaves one side two or three times longer)."""
    if not en or not es:
        return False
    ratio = len(en) / len(es)
    return 0.5 <= ratio <= 2.0


def _modules(path: Path):
    try:
        from pysword.modules import SwordModules
    except ImportError as e:  # pragma: no cover - pysword is in requirements.txt
        raise CorpusMissing("reading the Bible corpus needs the `pysword` package (pip install pysword)") from e
    conf = path / "mods.d"
    if not (conf / f"{ENGLISH}.conf").is_file() or not (conf / f"{SPANISH}.conf").is_file():
        raise CorpusMissing(f"the Bible corpus is not installed under {path}: install the Debian packages "
                            f"{PACKAGES} (apt-get install {PACKAGES.replace(' and ', ' ')}; on a Space list them in "
                            f"packages.txt). The committed test and validation verses (data/bible-en-es/) work "
                            f"without them; training needs them.")
    modules = SwordModules(str(path))
    modules.parse_modules()
    return tuple(_block_cached(modules.get_bible_from_module(name)) for name in (ENGLISH, SPANISH))


def _block_cached(bible):
    """`bible` keeping its last few decompressed blocks. A compressed SWORD module stores a chapter or more per
    zlib block, and pysword decompresses the whole block for every verse it reads: 31,000 verses read one by one
    spent 90% of their time (minutes) in zlib. Only a speed-up: a pysword without the method reads as before."""
    if callable(getattr(bible, "_decompressed_text", None)):
        bible._decompressed_text = functools.lru_cache(maxsize=4)(bible._decompressed_text)
    return bible


def read_pairs(path: str | Path = SWORD_PATH) -> Iterator[VersePair]:
    """Every verse of the KJV scheme that both installed modules hold, as aligned text with its Strong's links.
    Raises CorpusMissing (naming the Debian packages) when the modules are not installed."""
    from pysword.bible import BibleStructure

    english, spanish = _modules(Path(path))
    yield from aligned_pairs(english, spanish, BibleStructure(VERSIFICATION).get_books())


def aligned_pairs(english, spanish, books: dict) -> Iterator[VersePair]:
    """Walk the references of one versification (`books`: {testament: [book with name, osis_name,
    chapter_lengths]}) and look each up in both modules (objects with pysword's `get(books=, chapters=, verses=,
    clean=False)`); a reference that one module's own scheme lacks raises there and is dropped, and so is a pair
    that `plausible` rejects."""
    for testament in books.values():
        for book in testament:
            for chapter, n_verses in enumerate(book.chapter_lengths, start=1):
                for verse in range(1, n_verses + 1):
                    pair = _pair(english, spanish, book, chapter, verse)
                    if pair is not None:
                        yield pair


def _pair(english, spanish, book, chapter: int, verse: int) -> VersePair | None:
    texts = []
    for bible in (english, spanish):
        try:
            texts.append(bible.get(books=[book.name], chapters=[chapter], verses=[verse], clean=False))
        except (ValueError, IndexError, KeyError):  # the reference does not exist in this module's scheme
            return None
    en, es = osis_words(texts[0]), osis_words(texts[1])
    if not plausible(en, es):
        return None
    return VersePair(f"{book.osis_name}.{chapter}.{verse}", " ".join(w.text for w in en), " ".join(w.text for w in es),
                     verse_links(en, es))
