"""The Bible reader, the fixed split and the translation batches, on hand-made OSIS markup and fake modules.

Guards the traps met when reading the two SWORD modules: inline footnotes, words glued or split by tag removal, the
glossary after a chapter's end, empty verses, references one versification lacks."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from transformer.translation.bible import VersePair, aligned_pairs, osis_words, verse_links
from transformer.translation.corpus import parse_links, read_tsv, split_ids, training_pairs, write_tsv


def texts(markup: str) -> list[str]:
    return [w.text for w in osis_words(markup)]


def test_a_footnote_is_dropped_whole_and_does_not_glue_its_neighbours():
    markup = ('<w lemma="strong:H0430">God</w><note placement="foot"><reference>1:1 </reference>The Hebrew word '
              '“אֱלֹהִ֑ים”.</note><w lemma="strong:H1254">created</w> the earth.')
    assert texts(markup) == ["God", "created", "the", "earth."]


def test_punctuation_left_alone_by_tag_removal_goes_back_on_its_word():
    markup = '<w lemma="strong:G2889">world</w><div type="x-p"/>, he said: <q>“<w>Come</w>”</q>'
    assert texts(markup) == ["world,", "he", "said:", "“Come”"]


def test_strongs_numbers_follow_every_word_of_a_multiword_element():
    words = osis_words('<w lemma="strong:G3779">de tal manera</w> <w lemma="strong:G0025 strong:G0026">amó</w>')
    assert [w.text for w in words] == ["de", "tal", "manera", "amó"]
    assert [sorted(w.strongs) for w in words] == [["G3779"]] * 3 + [["G25", "G26"]]  # zero padding removed


def test_text_after_a_chapters_end_is_not_part_of_the_verse():
    markup = 'saints. Amen. <chapter eID="Rev.22"/><div eID="x"/> <div type="glossary">Abba: Father</div>'
    assert texts(markup) == ["saints.", "Amen."]


def test_headings_are_dropped_but_canonical_titles_kept():
    assert texts('<title type="x">A heading</title>In the beginning') == ["In", "the", "beginning"]
    assert texts('<title canonical="true">A Psalm.</title> Yahweh') == ["A", "Psalm.", "Yahweh"]


def test_links_join_words_that_share_a_strongs_number():
    en = osis_words('<w lemma="strong:G2316">God</w> <w lemma="strong:G0025">loved</w>')
    es = osis_words('<w lemma="strong:G0025">amó</w> <w lemma="strong:G2316">Dios</w> y')
    assert verse_links(en, es) == ((0, 1), (1, 0))


class FakeBible:
    """pysword's `get` over a dict {(book, chapter, verse): markup}; a missing reference raises ValueError."""

    def __init__(self, verses):
        self.verses = verses

    def get(self, books, chapters, verses, clean):
        key = (books[0], chapters[0], verses[0])
        if key not in self.verses:
            raise ValueError(f"{key} does not exist in this versification")
        return self.verses[key]


def test_versification_mapping_keeps_references_both_modules_hold():
    books = {"nt": [SimpleNamespace(name="3 John", osis_name="3John", chapter_lengths=[3])]}
    english = FakeBible({("3 John", 1, 1): "<w>Hello</w> friend.", ("3 John", 1, 2): "",
                         ("3 John", 1, 3): "one two three four five"})
    spanish = FakeBible({("3 John", 1, 1): "Hola amigo.", ("3 John", 1, 2): "Algo.",
                         ("3 John", 1, 3): "uno"})  # verse 3: split differently, 5 words against 1
    pairs = list(aligned_pairs(english, spanish, books))
    assert [(p.verse, p.en, p.es) for p in pairs] == [("3John.1.1", "Hello friend.", "Hola amigo.")]


def test_split_is_a_function_of_the_ids_and_the_seed_and_disjoint():
    ids = [f"Gen.1.{i}" for i in range(1, 60)]
    test, valid = split_ids(reversed(ids), n_test=10, n_valid=10)
    assert (test, valid) == split_ids(ids, n_test=10, n_valid=10)  # the order of reading does not matter
    assert len(set(test) | set(valid)) == 20
    assert split_ids(ids, seed=1, n_test=10, n_valid=10) != (test, valid)


def test_training_pairs_leave_out_every_held_out_verse(tmp_path):
    pairs = [VersePair(f"Gen.1.{i}", f"e{i}", f"s{i}", ((0, 0),)) for i in range(1, 30)]
    write_tsv(tmp_path / "test.tsv", pairs[:3])
    write_tsv(tmp_path / "valid.tsv", pairs[3:5])
    kept = training_pairs(pairs, tmp_path)
    assert {p.verse for p in kept} == {p.verse for p in pairs[5:]}


def test_tsv_round_trip_and_a_malformed_file_is_refused(tmp_path):
    pair = VersePair("John.3.16", "For God so loved", "Porque de tal manera amó", ((0, 0), (2, 1), (3, 4)))
    write_tsv(tmp_path / "x.tsv", [pair])
    assert read_tsv(tmp_path / "x.tsv") == [pair]
    assert parse_links("0-0 2-1") == ((0, 0), (2, 1))
    (tmp_path / "bad.tsv").write_text("verse\ten\n", encoding="utf-8")
    with pytest.raises(ValueError, match="header"):
        read_tsv(tmp_path / "bad.tsv")


def test_committed_split_files_are_well_formed():
    """1,000 + 1,000 distinct verses; every link points inside its verse's words."""
    from transformer.translation.corpus import held_out

    test, valid = held_out()
    assert len(test) == len(valid) == 1000
    assert not {p.verse for p in test} & {p.verse for p in valid}
    for p in test + valid:
        n_en, n_es = len(p.en.split()), len(p.es.split())
        assert all(0 <= i < n_en and 0 <= j < n_es for i, j in p.links), p.verse
