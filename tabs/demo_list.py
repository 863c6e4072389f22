"""The demos for a class, as data: each sets the checkpoint, the input and the view, and says what to look for
(its claims about the figure: tabs.demo_claims), and may ask a question first (tabs.ask_first). What a click does
with them is tabs.demos.

The head a demo opens is the one that scores best on the demo's score (tabs.attention.choose.focus_head), or for a
demo of the value-weighted norms the one where they look most unlike the weights (tabs.demos.demo_focus), never a
hard-coded layer and head, so a retrained checkpoint still opens on the right head.
"""
from __future__ import annotations

from transformer.heads import AttentionKind
from transformer.interpretability.patching_demos import TRANSLATION_EXAMPLES, induction_texts

from tabs.ask_first import (Choice, Question, column_mean, distinct_keys, equal, every_head, looks_ahead,
                            most_common_offset, sign_changes, top_cells)
from tabs.attention.translation_view import GOLD_SCORE
from tabs.attention.views import SHOW
from tabs.demo import Demo
from tabs.demo_claims import (Cited, Claim, depends_only_on_distance, extreme_cell, extreme_row, fires_at,
                              first_feature, gold_link, induction_stripe, largest_bar, masked_exactly_above_diagonal,
                              open_head, reads, reads_backwards, repeats_after, rows_sum_to_one, said, share_at_offset)
from tabs.positional import PE_MATRIX


REPEATED = "kqwzjxtbhmfa" * 2  # random letters, then the same letters again
# "Attention forming": the tiny preset at the Train tab's highest peak learning rate, twice as long. The preset
# (3e-3, 1500 steps) reaches 100% exact match with blurry heads (anti-diagonal 0.66 on "attention"); this recipe
# leaves every head >= 0.94 (bench/RESULTS.md, "Issue 19: attention forming live";
# tests/integration/test_attention_forming_live.py).
REVERSE_LIVE = {"layers": 1, "heads": 4, "d_model": 64, "lr": 1e-2, "steps": 3000, "batch_size": 64}

INDUCTION_CLEAN, INDUCTION_CORRUPTED = induction_texts()  # 20 random characters, then the same again
_, VERSE, VERSE_CHANGED = next(e for e in TRANSLATION_EXAMPLES if e[0] == "Gen.24.26")
ACTS_13_52 = ("The disciples were filled with joy and with the Holy Spirit.",  # held out of training, and its
              "Y los discípulos estaban llenos de gozo, y del Espíritu Santo.")  # reference Spanish
# What a GPT-2 demo says when GPT-2 is not cached: its button stays, so a class learns what exists and how to get it
GPT2_MISSING = ("GPT-2's weights are not in this machine's Hugging Face cache. `python -m transformer.pretrained gpt2` "
                "downloads GPT-2 small (124 M parameters, about 550 MB); restart the app and this demo runs.")
IOI_CLEAN = "When Mary and John went to the store, John gave a drink to"
IOI_CORRUPTED = "When Mary and John went to the store, Mary gave a drink to"
PATCHING_DEMOS = [
    Demo("Which heads copy?", "attention",
         said("Clean: ", Claim("20 random characters repeated", lambda seen: repeats_after(seen["att-one"], 20),
                               True),
              "; corrupted: the first half changed except its last character. In **What a head does**, ",
              Claim("the heads grid lights the **induction head** and the **previous-token head** (open)",
                    lambda seen: (top_cells(seen["patch-heads"], 2), open_head(seen)), (("0.1", "1.0"), "0.1")),
              ", and ", Claim("the paths from it show it acting through the induction head's **key**, not its query",
                              lambda seen: extreme_row(seen["patch-from"]), 1),  # layer 1's key row
              " (K-composition). Patching tells which parts carry the difference between the two inputs; it cannot "
              "tell what else a head does, nor how it would act on other inputs."), ckpt="induction",
         text=INDUCTION_CLEAN, text_b=INDUCTION_CORRUPTED, kind=AttentionKind.DECODER_SELF.value,
         score="previous token",
         question=Question("Patching puts one head's output from the clean run into the corrupted one. Which two "
                           "heads bring back the most of the clean answer, each alone?",
                           "Head **0.1**, the previous-token head (all of the answer, alone), then the induction head "
                           "**1.0**: the two heads of the induction circuit, the first feeding the second.",
                           lambda cells: top_cells(cells, 2), ("0.1", "1.0"), figure="patch-heads")),
    Demo("Who carries a word?", "attention",
         said(f"Clean: \"{VERSE}\"; corrupted: *man* changed to *woman*; both runs read the translation of the "
              "clean verse, measured where the two first disagree (*el* against *la*). ",
              Claim("The heads grid shows which **cross-attention heads** carry the changed word to the decoder",
                    lambda seen: seen["patch-heads"].title.startswith(AttentionKind.CROSS.value), True),
              "; compare with where the open head looks. Patching shows what carries this one difference; a head "
              "that looks at the word but carries little matters less than its weights suggest."),
         ckpt="translate-en-es", text=VERSE, text_b=VERSE_CHANGED,
         kind=AttentionKind.CROSS.value, score="entropy",
         question=Question("*The man bowed* becomes *The woman bowed*, and the Spanish *el* becomes *la*. Which "
                           "cross-attention head, patched alone, brings back the most of *el*?",
                           "Head **2.2**, in layer 2: alone it brings back about half of the difference; the heads of "
                           "layer 0 carry almost nothing of it.",
                           lambda cells: top_cells(cells, 1), ("2.2",), figure="patch-heads",
                           choices=every_head)),
    Demo("Induction in GPT-2", "attention",
         said("Real **GPT-2** weights, read by our own decoder. The sentence comes twice: in the second copy, GPT-2's "
              "**induction heads** (", Cited("layers 5-7 in the literature: 5.1, 5.5, 6.9, 7.2, 7.10",
                                             "tests/integration/test_gpt2_known_heads.py, where GPT-2 is cached"),
              ") look at the token after the earlier copy of the current one: a stripe just right of the repeat's "
              "diagonal."), ckpt="gpt2 (pretrained)",
         text="The quick brown fox jumps over the lazy dog near the river bank. The quick brown fox jumps over the "
              "lazy dog near the river bank.", kind=AttentionKind.DECODER_SELF.value, score="induction",
         missing=GPT2_MISSING),
    Demo("IOI in GPT-2", "attention",
         said(f"Clean: \"{IOI_CLEAN}\" (answer *Mary*); corrupted: the second *John* made *Mary* (answer *John*). "
              "The heads grid (attribution patching: ", Cited("one backward pass for 144 heads",
                                                             "GPT-2 small: 12 layers x 12 heads"),
              ") should light ", Cited("the literature's **name movers** (9.6, 9.9, 10.0) and **S-inhibition heads** "
                                      "(7.3, 7.9, 8.6, 8.10)", "Wang et al. 2022 (IOI); "
                                      "tests/integration/test_gpt2_ioi_heads.py, where GPT-2 is cached"),
              ". Patching finds the heads this pair depends on; the roles (moving, inhibiting) come from the path "
              "patching and the attention, and other sentences may use other heads."), ckpt="gpt2 (pretrained)",
         text=IOI_CLEAN,
         text_b=IOI_CORRUPTED, answers=(" Mary", " John"), kind=AttentionKind.DECODER_SELF.value, score="entropy",
         missing=GPT2_MISSING),
]

# "What the heads write": a feature of the future tense in cross-attention layer 3, found by bench/feature_demo_search.py
# (bench/RESULTS.md) on the test verse Ps.49.3, which the model writes "Mi boca hablará palabras de sabiduría; y mi
# corazón hablará inteligencia."
FUTURE_VERSE = "My mouth will speak words of wisdom. My heart will utter understanding."
FEATURES_DEMO = Demo(
    "What a head writes", "attention",
    said("A sparse autoencoder splits what cross-attention's heads write into features. Where the decoder writes "
         "the future ending *-ará* of *hablará*, ",
         Claim("the most active feature of layer 3 is feature 337", lambda seen: first_feature(
             seen["features-heads"]), "f337"), ": ",
         Cited("a feature of the future tense: 75% of its 40 strongest activations on held-out verses are future "
               "endings (-ará, -arán, -aréis, -irá), and there its main head reads *shall* or *will* every time",
               "bench/feature_demo_search.py, bench/RESULTS.md"), ". ",
         Claim("One head writes most of it: 3.0, 87% of its decoder row", lambda seen: largest_bar(
             seen["features-heads"]), ("head 3.0", 0.87)), "; ",
         Claim("that head, open above, reads the English *will* at that row", lambda seen: (
             open_head(seen), reads(seen["att-one"], "ará")), ("3.0", "␣will")), ". ",
         Claim("In this verse the feature fires at the two *-ará* and nowhere else", lambda seen: fires_at(
             seen["features-strip"]), ("ará", "ará")),
         " (the strip under the bars). A feature is a direction the SAE found in what the heads write, checked on "
         "held-out text; it is not a rule the model states."),
    ckpt="translate-en-es", text=FUTURE_VERSE, kind=AttentionKind.CROSS.value, score="entropy",
    features=(3, 3, 337),
    question=Question("Where the decoder writes *-ará*, the future ending of *hablará*, which English word will the "
                      "head that writes the future-tense feature read most?",
                      "***will***: the head reads the English word that makes the future, and writes a feature of "
                      "the future tense into the decoder.",
                      lambda cells: cells.columns[cells.argmax(cells.row("ará"))], "␣will", choices=distinct_keys))

# Near the row's end: at 1280 px the row's two lines are full (fourteen demos, 8 px apart, "What a head writes" last);
# one more button, or a longer label, starts a third line and pushes the heatmap below the fold
# (tests/browser/test_layout.py)
NORMS_DEMO = Demo(
    "Weights or what moves", "attention",
    said("The cells show the **value-weighted norms**, each key's share of what the head adds to the output, "
         "‖α·f(x)‖ ", Cited("(Kobayashi et al. 2020)", "Kobayashi et al. 2020, Attention is not only a weight"),
         ", ", Cited("on the head of this verse where they differ most from the weights",
                     "tests/app/test_norms_demo.py (most_moved_head over every kind, layer and head)"), ": ",
         Claim("**decoder self-attention, layer 2, head 2**", lambda seen: (
             AttentionKind.DECODER_SELF.value in seen["att-one"].title, open_head(seen)), (True, "2.2")), ". ",
         Claim("`<s>` holds 45% of each Spanish token's weight", lambda seen: round(
             column_mean(seen["att-weights"], "<s>"), 2), 0.45), " ",
         Claim("but adds only 28% of what the head moves", lambda seen: round(
             column_mean(seen["att-one"], "<s>"), 2), 0.28),
         ": the `<s>` column fades. Switch **Cells show** to compare the two on any head."),
    ckpt="translate-en-es", text=ACTS_13_52[0], target=ACTS_13_52[1], kind=AttentionKind.DECODER_SELF.value,
    score="entropy", show=SHOW[1],
    question=Question("In the weights, this head puts 45% of each Spanish token's attention on `<s>`, the start "
                      "token. Counted by what each key actually adds to the output (the value-weighted norms), will "
                      "`<s>` keep about 45%, more, or less?",
                      "**Less: 28%**, on average over the Spanish tokens. The head looks at `<s>`, but `<s>`'s value "
                      "vector is small, so it moves little: its column fades.",
                      lambda cells: round(column_mean(cells, "<s>"), 2), 0.28,
                      choices=lambda cells: (Choice("less than 45%", lambda share: share < 0.4),
                                             Choice("about 45%", lambda share: 0.4 <= share <= 0.5),
                                             Choice("more than 45%", lambda share: share > 0.5))))

DEMOS = [
    Demo("Reading backwards", "attention",
         said("The **reverse** model writes its input backwards. In **cross-attention** each output letter (a row) "
              "looks at the source letter it copies: ",
              Claim("the first output letter at the last input letter, and so on, so the weights form an "
                    "**anti-diagonal**", lambda seen: reads_backwards(seen["att-one"]), True),
              ". The overview colours every head by how anti-diagonal it is; ",
              Claim("the darkest one is open", lambda seen: extreme_cell(seen["att-overview"]) == open_head(seen),
                    True), "."), ckpt="reverse", text="attention", kind=AttentionKind.CROSS.value,
         score="anti-diagonal",
         question=Question("The model writes *attention* backwards: *noitnetta*. Its 3rd output letter is the *i*. "
                           "Which letter of *attention* will that output letter read: the 1st, the 3rd, the 7th?",
                           "The **7th**, the *i* of *attention*: output letter i reads source letter n + 1 − i, so "
                           "the darkest cells run from corner to corner, an anti-diagonal.",
                           lambda cells: cells.argmax(cells.row("i")) + 1, 7,
                           choices=lambda cells: tuple(equal(f"letter {j + 1} ({c})", j + 1)
                                                       for j, c in enumerate(cells.columns)))),
    Demo("The causal mask", "attention",
         said("A language model predicts the next character, so a position may look only **back**: ",
              Claim("every cell above the diagonal is **masked** (grey), never just small",
                    lambda seen: masked_exactly_above_diagonal(seen["att-one"]), True), ". ",
              Claim("Each row still sums to 1 over what it may see", lambda seen: rows_sum_to_one(seen["att-one"]),
                    True), ". ",
              Claim("The sharpest head is open", lambda seen: extreme_cell(seen["att-overview"], low=True)
                    == open_head(seen), True), " (the lowest entropy in the overview)."),
         ckpt="shakespeare-char", text="To be, or not to be, that is the question",
         kind=AttentionKind.DECODER_SELF.value, score="entropy",
         question=Question("This model predicts the next character of *To be, or not to be, …*. Can the first *b* "
                           "look at the characters that come after it?",
                           "**No.** Every cell right of the diagonal is masked (grey, no weight at all): a position "
                           "may only look back, or it would read the very character it must predict.",
                           looks_ahead, False, choices=lambda cells: (equal("Yes", True), equal("No", False)))),
    Demo("Previous-token head", "attention",
         said("In the **induction** model, ",
              Claim("one head of the first layer", lambda seen: open_head(seen).split(".")[0], "0"),
              " puts almost all its weight on the **previous token**: ",
              Claim("93% on average, the cells just left of the diagonal",
                    lambda seen: share_at_offset(seen["att-one"], -1, range(1, len(seen["att-one"].rows))), 0.93),
              ". That head copies \"what came before me\" into each position, the first half of an induction "
              "circuit."), ckpt="induction", text=REPEATED,
         kind=AttentionKind.DECODER_SELF.value, score="previous token",
         question=Question("In this head, where will each letter look most: at itself, at the letter just before "
                           "it, or at the first letter?",
                           "At the **letter just before it**: the dark cells sit just left of the diagonal.",
                           lambda cells: most_common_offset(cells), -1,
                           # the rule reads an offset from each letter: the first letter is none, never the reading
                           choices=lambda cells: (equal("at itself", 0), equal("at the letter just before it", -1),
                                                  Choice("at the first letter", lambda offset: False)))),
    Demo("Induction head", "attention",
         said("The input is random letters, then the **same letters again**. ",
              Claim("In the second half, an **induction head** looks at the token that came *after* the earlier copy "
                    "of the current token", lambda seen: induction_stripe(seen["att-one"]), 1.0),
              " (a stripe one step right of where the repeat started) and predicts it: in-context copying, learned "
              "from data ", Cited("(Olsson et al. 2022)", "Olsson et al. 2022, In-context learning and induction "
                                                         "heads"), "."),
         ckpt="induction", text=REPEATED, kind=AttentionKind.DECODER_SELF.value, score="induction",
         question=Question(f"The letters *{REPEATED[:12]}* come twice. Which earlier letter will the **second** *t* "
                           "look at most?",
                           "The ***b*** (the 8th letter), the letter that came **after** the first *t*: an induction "
                           "head looks up what followed the earlier copy of the current letter, and predicts it "
                           "comes next.", lambda cells: cells.columns[cells.argmax(cells.row("t", 2))], "b",
                           choices=lambda cells: distinct_keys(cells, cells.row("t", 2)))),
    Demo("Who reads whom?", "attention",
         said("**Cross-attention in words** of the translation model (trained on Bible verses) on a verse it never "
              "saw ", Cited("(Acts 13:52)", "data/bible-en-es/test.tsv"), ", on ",
              Claim("the head that aligns it best (AER in the title)", lambda seen: (
                  extreme_cell(seen["att-overview"], low=True) == open_head(seen)), True),
              "; circles are the gold links (same Strong's number). Word order: *Holy Spirit* becomes *Espíritu "
              "Santo*, so ", Claim("the gold circles cross", lambda seen: (
                  gold_link(seen["att-one"], "Espíritu"), gold_link(seen["att-one"], "Santo.")), ("Spirit.", "Holy")),
              "; ", Claim("the darkest cells do not: *Espíritu* reads *Holy* most, *Santo* the end `</s>`",
                          lambda seen: (reads(seen["att-one"], "Espíritu"), reads(seen["att-one"], "Santo.")),
                          ("Holy", "</s>")),
              ". A head that aligns best still only roughly aligns."),
         ckpt="translate-en-es", text=ACTS_13_52[0], target=ACTS_13_52[1], kind=AttentionKind.CROSS.value,
         score=GOLD_SCORE, words=True,
         question=Question("The model writes the Spanish one word at a time, reading the English as it goes. "
                           "Which English word will the Spanish word *llenos* read most?",
                           "***filled***, almost all of its weight: *llenos* is its translation. Cross-attention "
                           "finds the source word being translated, wherever it is.",
                           lambda cells: cells.columns[cells.argmax(cells.row("llenos"))], "filled",
                           choices=distinct_keys)),
    Demo("Sinusoid waves", "positional",
         said("Each position gets a vector of sines and cosines (", Cited("section 3.5 of the paper",
                                                                           "Vaswani et al. 2017"), "). ",
              Claim("Low dimensions wave fast, high ones slowly", lambda seen: sign_changes(seen["pe-pe"].z[:, 0])
                    > sign_changes(seen["pe-pe"].z[:, -1]), True),
              ", so every position has its own pattern; ",
              Claim("the dot product of two positions depends only on how far apart they are",
                    lambda seen: depends_only_on_distance(seen["pe-similarity"]), True),
              " (the band along the diagonal of the similarity map)."),
         question=Question("Each dimension of the position vector is a wave over the positions. Which one waves "
                           "faster: the first dimension or the last?",
                           "**The first.** Dimension 0's wavelength is 2π positions; the last one's is nearly "
                           "10000·2π, so it hardly changes over the first 100 positions.",
                           lambda cells: "first" if sign_changes(cells.z[:, 0]) > sign_changes(cells.z[:, -1])
                           else "last", "first", figure=PE_MATRIX,
                           choices=lambda cells: (equal("The first dimension", "first"),
                                                  equal("The last dimension", "last")))),
    Demo("Attention forming", "train",
         said("Press **Start**: a tiny model learns to **reverse** letters from scratch (",
              Cited("3000 steps, 2-4 minutes on a 2-core laptop", "bench/RESULTS.md, issue 19"),
              "). The attention map refreshes at every evaluation: noise first, then the anti-diagonal appears as "
              "the exact match climbs, and it keeps sharpening after the answers are right: ",
              Cited("at the end each head puts about 95% of its weight on the letter it copies",
                    "tests/integration/test_attention_forming_live.py"), "."), task="reverse", recipe=REVERSE_LIVE),
    Demo("Induction forming", "train",
         said(Cited("A 2-layer model", "checkpoints/induction/README.md"), " learns random letters that repeat, "
              "live (", Cited("2-4 minutes on 2 CPU cores", "bench/RESULTS.md"), "). ",
              Cited("The **loss** stays flat, then falls by half within a few hundred steps, exactly when the "
                    "**induction score** below jumps", "tests/integration/test_induction_phase_change.py"),
              " (the shaded window): the previous-token and induction heads form together ",
              Cited("(Olsson et al. 2022)", "Olsson et al. 2022, In-context learning and induction heads"), "."),
         watch=True),
] + PATCHING_DEMOS + [NORMS_DEMO, FEATURES_DEMO]
