"""Cross-attention in words and the gold verse it reads (transformer.translation.gold): the rule the card's AER, the
Attention tab's gold markers and its per-head AER share."""
from __future__ import annotations

import pytest
import torch

from tests.conftest import seeded_model, tiny_config
from transformer.encoding import source_ids
from transformer.interpretability.probe import record_ids
from transformer.tokenization import CharTokenizer
from transformer.translation.corpus import held_out
from transformer.translation.gold import aer_per_head, cross_words, gold_links, head_alignment, verse_of

VERSE = next(p for p in held_out()[0] if p.verse == "Acts.13.52")


def cross_pattern(en: str, es: str):
    tok = CharTokenizer(set(en + es))
    model = seeded_model(tiny_config(vocab_size=tok.vocab_size, max_len=128))
    return record_ids(model, tok, source_ids(tok, en, model.config), tok.encode(es)).patterns["cross"]


def test_words_are_the_whitespace_words_and_rows_keep_the_text_share():
    pattern = cross_pattern(VERSE.en, VERSE.es)
    cross = cross_words(pattern)
    assert cross.en_words == VERSE.en.split() and cross.es_words == VERSE.es.split()
    L, H = pattern.weights.shape[:2]
    assert cross.weights.shape == (L, H, len(VERSE.es.split()), len(VERSE.en.split()))
    # oracle: a Spanish word's row is the mean over its characters of their weight on everything but </s>
    first_word = len(VERSE.es.split()[0])  # "Y": one character, produced at decoder step 0
    expected = 1 - pattern.weights[0, 0, :first_word, -1].mean()
    assert torch.allclose(cross.weights[0, 0, 0].sum(), expected, atol=1e-6)


def test_the_gold_verse_is_found_only_for_its_own_source_and_reference():
    assert verse_of(cross_pattern(VERSE.en, VERSE.es)) == VERSE
    assert verse_of(cross_pattern(VERSE.en, "Y los discípulos")) is None
    assert verse_of(cross_pattern("The disciples were filled.", VERSE.es)) is None


def test_a_head_that_follows_the_gold_links_has_aer_0_and_the_table_ranks_it_first():
    n_en, n_es = len(VERSE.en.split()), len(VERSE.es.split())
    gold = gold_links(VERSE, n_en, n_es)
    one_to_one = {}
    for i, j in sorted(gold):
        one_to_one.setdefault(j, i)
    weights = torch.full((1, 2, n_es, n_en), 1.0 / n_en)  # head 1: uniform
    for j, i in one_to_one.items():
        weights[0, 0, j] = 0.0
        weights[0, 0, j, i] = 1.0
    predicted, s = head_alignment(weights[0, 0], {(i, j) for j, i in one_to_one.items()})
    assert s.aer == 0.0 and predicted == {(i, j) for j, i in one_to_one.items()}
    from transformer.translation.gold import WordCross

    aer = aer_per_head(WordCross(weights, [], []), gold)
    assert aer.shape == (1, 2) and aer[0, 0] < aer[0, 1]


def test_function_words_in_both_languages_with_capitals_and_punctuation():
    """The rule of transformer.translation.gold.FUNCTION_WORDS: articles, prepositions and conjunctions, read past
    capitals and punctuation ("Y", "del,"); content words are not."""
    from transformer.translation.gold import is_function_word

    assert all(is_function_word(w, "en") for w in ("The", "and", "with", "of,"))
    assert all(is_function_word(w, "es") for w in ("Y", "los", "del", "de", "á", "con;"))
    assert not any(is_function_word(w, "en") for w in ("disciples", "Spirit.", "joy"))
    assert not any(is_function_word(w, "es") for w in ("Espíritu", "gozo,", "llenos"))
    with pytest.raises(ValueError, match="language"):
        is_function_word("the", "fr")


def test_the_demo_verse_splits_into_content_and_function_links():
    """Regression (issue 29, item 13): Acts 13:52's 14 gold links were drawn alike, though 'and' -> 'y' and
    'the' -> 'los' link by a shared Strong's number of their phrase. Oracle, read by hand from the verse: the 7
    links on a function word are exactly these."""
    from transformer.translation.gold import function_link

    en, es = VERSE.en.split(), VERSE.es.split()
    function = {(en[i], es[j]) for i, j in VERSE.links if function_link((i, j), en, es)}
    assert function == {("The", "los"), ("with", "y"), ("joy", "de"), ("and", "y"), ("the", "los"),
                        ("Spirit.", "del")}  # 7 links: "with" -> "y" twice
    assert sum(function_link(link, en, es) for link in VERSE.links) == 7 and len(VERSE.links) == 14
