"""What a link carries reaches the page as text, never as markup (issue 37, item 1), in chromium: links whose every
field carries HTML (`<a href>`, `<form><input>`, `<img src=http://...>`), Markdown links and images, KaTeX
(`$$...$$`) and an outside image URL. Before, the note above the tabs rendered the link's `<a href>`, `<form>`,
`<img>` and KaTeX, and the browser fetched the image from outside; "Beside a real translator" rendered the link's
reference as Markdown. Now the page holds no such element, no request leaves 127.0.0.1 (tour.OfflineGuard
records every request) and each text is shown as typed."""
from __future__ import annotations

from urllib.parse import quote, urlencode

from tests.browser import tour

OUTSIDE = "http://evil.example"  # no such host is reached: the guard aborts and records any request to it
# Every element a link could make of these, anywhere in the page (KaTeX draws its math in .katex)
MADE = (f"a[href^='{OUTSIDE}'], img[src^='{OUTSIDE}'], form input[name=pw], .katex, #link-note b, "
        "#att-beside-reference a, #att-beside-reference img, #patch-note img")


def _open(browser, app_url: str, fields: dict):
    page, guard = tour.new_page(browser)
    page.goto(app_url + "?" + urlencode(fields, quote_via=quote))
    return page, guard


def _made(page) -> list[str]:
    return page.evaluate(f"() => Array.from(document.querySelectorAll({MADE!r}), e => e.outerHTML.slice(0, 120))")


def test_every_ignored_field_of_a_link_is_said_as_typed_and_makes_no_element(browser, app_url):
    """Each field of the link fails its check, so each is quoted in the note above the tabs: the note shows each
    value as typed (the part the note quotes), and nothing of them became an element or a request."""
    fields = {"tab": "<form><input name=pw>", "ckpt": f"<img src={OUTSIDE}/ckpt.gif>", "cells": "$$x^2$$",
              "score": "**bold** _it_", "words": "[w](http://e.x)", "open": f"![s]({OUTSIDE}/s.png)"}
    page, guard = _open(browser, app_url, fields)
    note = page.locator("#link-note")
    note.wait_for(state="visible")
    page.wait_for_timeout(1000)  # the Markdown's KaTeX pass runs after it is drawn
    said = note.inner_text()
    assert [name for name, value in fields.items() if value not in said] == [], said
    assert _made(page) == []
    assert guard.blocked == [] and guard.allowed
    page.close()


def test_a_links_answer_token_and_kind_are_shown_as_typed(browser, app_url):
    """A link to `reverse` whose kind and patching answer token carry markup: the note above the tabs quotes the
    kind, the patching section's refusal of the answer (many tokens) quotes the answer, both as typed; the input
    box holds the link's input as typed; no element, no outside request."""
    answer, kind = f"<img src={OUTSIDE}/a.gif>", f'<a href="{OUTSIDE}/">kind</a>'
    text = f"<img src={OUTSIDE}/t.gif>"
    fields = {"tab": "attention", "ckpt": "reverse", "text": text, "kind": kind,
              "text_b": "x" * len(text), "answer": answer, "open": "patch"}  # a pair of as many tokens
    page, guard = _open(browser, app_url, fields)
    page.wait_for_function("a => (document.querySelector('#patch-note') || {}).innerText?.includes(a)", arg=answer,
                           timeout=240_000)
    assert kind in page.locator("#link-note").inner_text()
    page.wait_for_timeout(1000)
    assert _made(page) == []
    assert page.locator("#att-text textarea").input_value() == fields["text"]
    assert guard.blocked == [] and guard.allowed
    page.close()


def test_a_links_reference_is_shown_as_typed_beside_a_real_translator(browser, app_url):
    """A link to the translation model whose reference carries a link, KaTeX and an outside image: "Beside a real
    translator" quotes the reference as typed; no element, no outside request."""
    reference = f'<a href="{OUTSIDE}/">Log in</a> $$x$$ ![i]({OUTSIDE}/r.png) Dios'
    fields = {"tab": "attention", "ckpt": "translate-en-es", "text": "God said", "target": reference}
    page, guard = _open(browser, app_url, fields)
    page.wait_for_function("r => (document.querySelector('#att-beside-reference') || {}).innerText?.includes(r)",
                           arg=reference, timeout=300_000)
    page.wait_for_timeout(1000)
    assert _made(page) == []
    assert guard.blocked == [] and guard.allowed
    page.close()
