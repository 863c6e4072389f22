"""What a one-click demo is: the checkpoint, the input and the view it sets, what it says to look for (its claims
about the figure: tabs.demo_claims), the question it may ask first (tabs.ask_first), and the figure it is about.
The demos themselves are tabs.demo_list; what a click does, tabs.demos."""
from __future__ import annotations

from dataclasses import dataclass

from tabs.ask_first import Question
from tabs.attention.views import SHOW
from tabs.demo_claims import Said
from tabs.positional import PE_MATRIX


@dataclass(frozen=True)
class Demo:
    label: str
    tab: str  # id of the tab it opens
    explain: Said  # what to look for, and why: its claims about the figure as data (tabs.demo_claims)
    ckpt: str | None = None
    text: str = ""
    target: str = ""  # seq2seq: the target the decoder reads ("" = the model's own output)
    words: bool = False  # open the heatmaps in words (subword tokens merged)
    show: str = SHOW[0]  # what the heatmap's cells show ("Cells show"): the weights or the value-weighted norms
    kind: str | None = None  # attention kind to open
    score: str | None = None  # the overview colour, and the score that picks the head
    task: str | None = None  # Train tab: the task to train on
    recipe: dict | None = None  # Train tab: the hyper-parameters it fills in ({name: value} of HYPER_PARAMETERS)
    watch: bool = False  # Train tab: start "Watch an induction head form" at once
    text_b: str = ""  # the second input (the corrupted run): opens the patching section on the pair
    answers: tuple[str, str] = ("", "")  # the patching section's two answer tokens ("": each run's top token)
    missing: str = ""  # shown instead when the checkpoint is not here (how to get it); the button stays
    question: Question | None = None  # asked before the figure is shown, when "Ask first" is on
    features: tuple[int, int, int] | None = None  # (layer, row, feature): opens "What the heads write" at that row of
    #                                               that layer of `kind`, on the head that writes most of the feature

    @property
    def figure(self) -> str:
        """The id of the figure the demo is about, which the page brings into view once drawn (wire_demos), and
        Reveal after its question: its question's, else a patching demo's heads grid, else its tab's (FIGURES).
        The one owner of where a demo takes the page (tests/app/test_demo_targets.py: each is on the page)."""
        if self.question:
            return self.question.figure
        if self.features:
            return "features-heads"
        return "patch-heads" if self.text_b else FIGURES[self.tab]

    @property
    def streams(self) -> bool:
        """Whether its figure is what a run streams to (the Train tab's status line): in view once laid out, then
        followed while it grows (tabs.ask_first.in_view_when_drawn)."""
        return self.tab == "train"


# The figure a demo of each tab is about: the one-head heatmap, the sinusoids' matrix, the training's status line (its
# chart under it: tabs.ask_first.CAPTIONS)
FIGURES = {"attention": "att-one", "positional": PE_MATRIX, "train": "train-status"}
