"""The paper's own task: English -> Spanish translation of the Bible (World English Bible -> Reina-Valera 1909).

bible.py (the SWORD reader and Strong's-number links), corpus.py (the fixed test/validation split), data.py
(length-bucketed batches for the Trainer), train.py (the CLI), evaluate.py (BLEU, chrF, attention alignments),
alignment.py (AER, and the one scoring of every aligner), overlap.py (how much of a test verse training already
holds), statistical.py (eflomal, the aligner the heads are compared with), card.py (the model card).
"""

TASK = "translate-en-es"  # the `task` of the translation checkpoint (config.json)
