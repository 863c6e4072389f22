"""Text that came from a user, a link or a file, made safe to show as text: the one owner of that rule (issue 37).

What a user types, what a link carries, what a model writes from them (tokens, translations) and what a file holds
must reach the page as the characters typed, never as markup: a link's `<form><input>` drawn inside the app, or
its `<img src=http://...>` fetched by every browser that opens it, is someone else writing the app's page.

- `html_text` for anything read as HTML: a gr.HTML, an SVG string, a plotly label (plotly reads `<b>`, `<a href>`
  and `<br>` in every label, title and hover text), a gradio toast (gr.Error's message is drawn as HTML). Every
  character HTML, plotly or gradio's HTML template could read is written as a numeric entity, which all three
  decode back to the character (plotly decodes `&lt;` and `&#34;`, but not `&quot;`).
- `markdown_text` for a gr.Markdown: every ASCII punctuation character backslash-escaped (CommonMark reads `\\*` as
  `*`, never as emphasis, a link, an image, an HTML tag or an autolink), and `$` put in an element of its own, so
  the page's KaTeX, which looks for `$$` in one run of text after the Markdown is drawn, never finds a pair.

Captions the app writes itself may stay Markdown: only the parts that came from outside go through these.
"""
from __future__ import annotations

import re

# characters HTML, plotly's pseudo-HTML and gradio's HTML template (`${...}`, `{{...}}`) read, as numeric entities
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"} | {c: f"&#{ord(c)};" for c in "\"'${}"}
_HTML_CHARS = re.compile("[" + re.escape("".join(_HTML)) + "]")
# CommonMark's backslash-escapable characters (all of ASCII punctuation) but `$`, which escaping does not hide from
# KaTeX (it runs on the drawn text)
_MARKDOWN_PUNCTUATION = re.compile(r"([!\"#%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])")
DOLLAR = "<span>$</span>"  # one `$` alone in its element: KaTeX's auto-render reads delimiters within a text node
_INDENT = re.compile(r"^[ \t]+", re.MULTILINE)  # a line's leading blanks, which would make an indented code block


def html_text(text) -> str:
    """`text` (any value: its str) as HTML that shows exactly its characters: `<a href=x>` reads `<a href=x>`."""
    return _HTML_CHARS.sub(lambda m: _HTML[m.group()], str(text))


def markdown_text(text) -> str:
    """`text` (any value: its str) as Markdown that shows exactly its characters: no emphasis, link, image, HTML,
    autolink, heading, list or math is made of it."""
    escaped = _MARKDOWN_PUNCTUATION.sub(r"\\\1", str(text)).replace("$", DOLLAR)
    return _INDENT.sub(lambda m: "".join(f"&#{ord(c)};" for c in m.group()), escaped)
