"""Known heads of real bert-base-uncased and SmolLM2-135M, read by our encoder and decoder running their weights.

BERT (Clark et al. 2019, "What Does BERT Look At?", figure 5; heads written layer-head from 1, as the paper's
"Head 1-1"): in head 8-10 direct objects attend to their verbs (86.8% accuracy on the dobj relation); in head 5-4
coreferent mentions attend to their antecedents (65.1%). SmolLM2: an induction head, found by the detector
(transformer/interpretability/analysis.py) on a sentence repeated twice.

Runs only where those weights are in the local Hugging Face cache (`python -m transformer.pretrained
bert-base-uncased`, `python -m transformer.pretrained HuggingFaceTB/SmolLM2-135M` put them there); skipped with that
reason otherwise. No network.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from transformer.encoding import with_eos
from transformer.interpretability.analysis import detector_scores
from transformer.pretrained import cached_pretrained_models, load_pretrained

BERT_BASE = {"model_type": "bert", "num_hidden_layers": 12, "hidden_size": 768, "vocab_size": 30522}
SMOLLM2_135M = {"model_type": "llama", "num_hidden_layers": 30, "hidden_size": 576, "num_key_value_heads": 3}


def in_cache(sizes: dict) -> str | None:
    """The local directory of a cached model whose config.json has these values, or None."""
    for _, source in cached_pretrained_models():
        config = json.loads((Path(source) / "config.json").read_text())
        if all(config.get(k) == v for k, v in sizes.items()):
            return source
    return None


BERT, SMOLLM2 = in_cache(BERT_BASE), in_cache(SMOLLM2_135M)
needs_bert = pytest.mark.skipif(BERT is None, reason="bert-base-uncased is not in the local Hugging Face cache; "
                                                     "`python -m transformer.pretrained bert-base-uncased` (440 MB)")
needs_smollm2 = pytest.mark.skipif(SMOLLM2 is None, reason="SmolLM2-135M is not in the local Hugging Face cache; "
                                                           "`python -m transformer.pretrained "
                                                           "HuggingFaceTB/SmolLM2-135M` (270 MB)")

# (sentence, the word that attends, the word it should attend to most): direct object -> its verb
DIRECT_OBJECTS = [("the chef cooked a big meal for the guests .", "meal", "cooked"),
                  ("she opened the heavy door slowly .", "door", "opened"),
                  ("the children painted a picture yesterday .", "picture", "painted"),
                  ("my brother fixed the old car in the garage .", "car", "fixed"),
                  ("the committee approved the new budget on monday .", "budget", "approved"),
                  ("he read the entire book in one night .", "book", "read")]
# coreferent mention -> its antecedent (the only earlier mention of that entity; other nouns around it)
COREFERENCE = [("the doctor told the patient that the doctor would return soon .", 7, 1),
               ("mary gave the keys to the driver because mary was leaving .", 8, 0),
               ("the company hired new staff and the company grew quickly .", 7, 1),
               ("john wrote to the editor , and john waited for a reply .", 7, 0)]


def head_attention(model, tokenizer, sentence: str, layer: int, head: int) -> tuple[list[str], torch.Tensor]:
    """(the words, one token each, of [CLS] sentence [SEP]; head `layer`-`head`'s weights (T, T)), numbered from 1."""
    ids = with_eos(tokenizer.encode(sentence), model.config)  # [CLS] sentence [SEP]
    words = [tokenizer.id_to_token(i) for i in ids]
    assert not any(w.startswith("##") for w in words), f"every word one piece: {words}"
    with torch.no_grad():
        maps = model(torch.tensor([ids]), return_attention=True).attention.encoder_self
    return words, maps[layer - 1][0, head - 1]


def most_attended_word(weights: torch.Tensor, query: int) -> int:
    """The position of the word (not [CLS], [SEP] or the query itself) that `query` attends to most."""
    row = weights[query].clone()
    row[[0, -1, query]] = -1.0
    return int(row.argmax())


@pytest.fixture(scope="module")
def bert():
    model, tokenizer, _ = load_pretrained(BERT, device="cpu")
    return model, tokenizer


@needs_bert
def test_head_8_10_direct_objects_attend_to_their_verbs(bert):
    """Oracle: Clark et al. 2019, head 8-10 (86.8% on dobj): in at least 5 of these 6 sentences the direct object's
    most-attended word (special tokens and itself aside) is its verb."""
    hits = []
    for sentence, obj, verb in DIRECT_OBJECTS:
        words, w = head_attention(*bert, sentence, 8, 10)
        hits.append(words[most_attended_word(w, words.index(obj))] == verb)
    assert sum(hits) >= 5, hits


@needs_bert
def test_head_5_4_coreferent_mentions_attend_to_their_antecedents(bert):
    """Oracle: Clark et al. 2019, head 5-4 (65.1% on coreference): a repeated mention puts more weight on its
    antecedent (the earlier mention of the same name or noun) than on any other word before it, in at least 3 of
    these 4 sentences (word positions count the sentence from 0; [CLS] shifts them by one)."""
    hits = []
    for sentence, mention, antecedent in COREFERENCE:
        words, w = head_attention(*bert, sentence, 5, 4)
        row = w[mention + 1, 1:mention + 1]  # the words before the mention
        hits.append(int(row.argmax()) == antecedent)
    assert sum(hits) >= 3, hits


@needs_smollm2
def test_smollm2_has_an_induction_head_on_a_repeated_sentence():
    """Oracle: Olsson et al. 2022: induction heads exist in trained decoders of this size. On a sentence repeated
    twice, the detector's best head puts at least 0.4 of its attention, on average over the second copy, on the
    token after the earlier occurrence of the current one, at least 4x the median head's score."""
    model, tokenizer, _ = load_pretrained(SMOLLM2, device="cpu")
    sentence = " The violinist from Lisbon quietly packed seven green umbrellas into a wooden crate."
    ids = torch.tensor(tokenizer.encode(sentence * 2))
    with torch.no_grad():
        maps = model(ids[None], return_attention=True).attention.decoder_self
    induction = detector_scores(torch.stack(maps)[:, 0], ids)["induction"]  # (30, 9)
    best = float(induction.max())
    assert best >= 0.4 and best >= 4 * float(induction.median()), (best, float(induction.median()))
