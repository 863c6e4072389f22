"""The Attention tab: the page (page), the record of an input (record), the views of a pattern (views), the inside of
a head (inside), the logit lens (lens), two inputs side by side (two_inputs) and the gold links of a verse
(translation_view)."""
