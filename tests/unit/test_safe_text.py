"""Text from a user, a link or a file reaches the page as text (visualize.text, issue 37): checked against the
renderers' own rules, CommonMark's backslash escapes read back by a Markdown parser (markdown-it, the CommonMark
reference's port) and HTML entities read back by the standard library."""
from __future__ import annotations

import html
import re

import pytest

from visualize.text import DOLLAR, html_text, markdown_text

HOSTILE = ['<a href="http://evil.example/">log in</a>', "<form><input name=p></form>",
           "<img src=http://127.0.0.2:9/pixel.gif>", "[click](http://evil.example) ![x](http://evil.example/i.png)",
           "$$\\int_0^1 x\\,dx$$ and $x$", "**bold** _it_ `code` ~~s~~ # h", "1. one\n- two\n> quote\n    code",
           "http://evil.example www.evil.example a@evil.example", "&lt;b&gt; \\* ${x} {{y}}", "<s></s>"]


def rendered_text(markdown: str) -> str:
    """The text a CommonMark renderer shows for `markdown` (its HTML with tags removed, entities decoded), and
    whether it made any tag other than the paragraph's and DOLLAR's span."""
    from markdown_it import MarkdownIt

    out = MarkdownIt("commonmark", {"html": True}).enable("strikethrough").render(markdown)
    tags = set(re.findall(r"</?([a-zA-Z][^\s>/]*)", out))
    return html.unescape(re.sub(r"<[^>]+>", "", out)), tags


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_text_is_read_back_as_the_same_text_and_no_element(text):
    """Invariant: a CommonMark parser (raw HTML on) makes no element of markdown_text's output but the paragraph and
    the spans that hold a `$` alone, and its text is the text given (whitespace aside); no bare URL, `www.` or
    address is left for GFM's autolinks (the page's Markdown is GFM)."""
    escaped = markdown_text(text)
    shown, tags = rendered_text(escaped)
    assert tags <= {"p", "span"}, tags
    assert shown.split() == text.split()
    assert not re.search(r"://|www\.|(?<!\\)@", escaped)


def test_markdown_text_puts_every_dollar_alone_in_its_element():
    """KaTeX reads `$$...$$` in one text node after Markdown is drawn: no `$` is left beside other text."""
    escaped = markdown_text("$$x$$")
    assert escaped.replace(DOLLAR, "") == "x" and escaped.count(DOLLAR) == 4


@pytest.mark.parametrize("text", HOSTILE)
def test_html_text_is_read_back_as_the_same_text_and_no_markup(text):
    """Invariant: no character HTML, plotly or gradio's template reads is left (< > & " ' $ { }), and decoding
    the entities gives the text back."""
    escaped = html_text(text)
    assert not set("<>\"'${}") & set(escaped)
    assert html.unescape(escaped) == text
