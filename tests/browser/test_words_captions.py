"""The head caption in the words view, read in chromium (issue 29, item 8, which had unit and app tests only): with
"words" on, shakespeare-char's previous-token head is captioned by a score of the words map on screen, said of
words, with its role in tokens beside it (it read "self head: 77%"), and an input without spaces (one word, a 1x1
map) gets no role and no score (it read "self head: 100%")."""
from __future__ import annotations

import re

from tests.browser import tour
from tests.browser.conftest import MEASURED
from tests.browser.test_readable_texts import _content  # the positions that hold text, not `<s>`

DEMO = "The causal mask"  # shakespeare-char on Hamlet's line; the head it opens, L0H0, is a previous-token head

# JS: the one-head heatmap as drawn (plotly's own data on the page): its title, its tick labels, and its cells, a
# masked cell (one the query may not see, drawn grey) as null
_HEATMAP = """() => { const gd = document.querySelector('#att-one .js-plotly-plot');
    return {title: gd.querySelector('.gtitle').textContent, keys: gd.layout.xaxis.ticktext,
            queries: gd.layout.yaxis.ticktext,
            z: Array.from(gd._fullData[0].z, row => Array.from(row, v => Number.isFinite(v) ? v : null))}; }"""
_TITLE = "t => ((document.querySelector('#att-one .gtitle') || {}).textContent || '') === t"


def _scores(cells: dict) -> dict[str, float]:
    """The scores a self-attention head's caption chooses its role from, computed here from the drawn cells, each
    as the caption defines it (transformer.interpretability.captions, on the map on screen), a masked cell
    counting 0, over the n text queries q_i and text keys k_i:
    previous: mean over queries t >= 1 of the weight on key t - 1;
    diagonal: mean of the weight of q_i on k_i (of a word on itself: attention that stays inside the word);
    anti-diagonal: mean of the weight of q_i on k_(n-1-i);
    one key: the key with the most weight summed over the text queries, and the mean weight on it over the
    queries that may see it, other than itself."""
    z, queries, keys = cells["z"], _content(cells["queries"]), _content(cells["keys"])

    def w(q: int, k: int) -> float:
        return (z[q][k] or 0.0) if 0 <= k < len(z[q]) else 0.0
    n = len(queries)
    rows = [t for t in queries if t >= 1]
    key = max(keys, key=lambda k: sum(w(q, k) for q in queries))
    seeing = [q for q in queries if z[q][key] is not None and q != key]
    return {"previous": sum(w(t, t - 1) for t in rows) / len(rows),
            "diagonal": sum(w(q, keys[i]) if i < len(keys) else 0.0 for i, q in enumerate(queries)) / n,
            "anti-diagonal": sum(w(q, keys[len(keys) - 1 - i]) if i < len(keys) else 0.0
                                 for i, q in enumerate(queries)) / n,
            "one key": sum(w(q, key) for q in seeing) / len(seeing) if seeing else 0.0}


# the role each score names in the words view (the diagonal of self-attention over words: attention that stays
# inside the word; over tokens it is "self")
WORD_ROLES = {"previous": "previous-word", "diagonal": "within-word", "anti-diagonal": "anti-diagonal",
              "one key": "one-word"}


def _new_caption(page, old: str) -> str:
    """The head caption once it is no longer `old` (its view was redrawn), or `old` if it stays (said by the
    assertions that read it)."""
    try:
        page.wait_for_function("c => document.querySelector('#att-caption').innerText !== c", arg=old,
                               timeout=20_000)
    except Exception:  # the caption stayed: the assertions say how
        pass
    return page.locator("#att-caption").inner_text()


def test_the_words_view_captions_the_words_map_and_an_input_without_spaces_gets_no_role(open_at):
    """Regression (issue 29, item 8): with "words" on, shakespeare-char's 95% previous-token head (L0H0 on Hamlet's
    line, the causal-mask demo) was captioned "self head: 77% of each token's attention goes to itself", and
    "abcdefghij" in words (one word: a 1x1 map) "self head: 100%".

    Oracle, the drawn cells (plotly's data on the page): in tokens, previous token is the strongest of the scores
    read off the token map and the caption says its share (95%); in words, the caption names the strongest score
    read off the words map, said of words (within-word, 77%), with the tokens' role and share beside it, and
    never "self head". Invariant: an input without spaces is one word in words, a 1x1 map, captioned with no role
    and no share, saying why and what to do."""
    page = open_at(1280)
    tour.click_demo(page, DEMO)
    page.locator("#demo-explain", has_text=DEMO).wait_for()
    page.wait_for_function(_TITLE, arg="decoder self attention, layer 0, head 0", timeout=60_000)
    page.locator("#att-caption", has_text="Layer 0, head 0").wait_for()
    tokens = _scores(page.evaluate(_HEATMAP))
    in_tokens = f"previous-token head: {tokens['previous']:.0%} of each token's attention"
    caption = page.locator("#att-caption").inner_text()
    assert max(tokens, key=tokens.get) == "previous" and in_tokens in caption, (tokens, caption)

    page.locator("#att-words input").check()
    page.wait_for_function(_TITLE, arg="decoder self attention in words, layer 0, head 0", timeout=60_000)
    caption = _new_caption(page, caption)
    words = page.evaluate(_HEATMAP)
    scores = _scores(words)
    best = max(scores, key=scores.get)
    in_words = f"Layer 0, head 0: {WORD_ROLES[best]} head: {scores[best]:.0%} of each word's attention"
    MEASURED["words caption, causal-mask demo L0H0"] = (f"{caption!r}; drawn words map: "
                                                        + ", ".join(f"{k} {v:.3f}" for k, v in scores.items()))
    assert len(words["keys"]) == 10 and words["keys"][-1] == "question", words["keys"]
    assert caption.startswith(in_words), (in_words, caption)
    assert f"in tokens, {in_tokens}" in caption, (in_tokens, caption)
    assert "self head" not in caption, caption

    page.locator("#att-text textarea").fill("abcdefghij")
    page.locator("#att-show").click()
    page.wait_for_function("() => { const gd = document.querySelector('#att-one .js-plotly-plot');"
                           " return gd && gd.layout.xaxis.ticktext.join() === 'abcdefghij'; }", timeout=60_000)
    caption = _new_caption(page, caption)
    one = page.evaluate(_HEATMAP)
    MEASURED["words caption, 'abcdefghij'"] = repr(caption)
    assert len(one["z"]) == 1 and len(one["z"][0]) == 1, one
    assert "%" not in caption and not re.search(r"(self|uniform|diagonal|word) head", caption), caption
    assert "switch Words off" in caption, caption
