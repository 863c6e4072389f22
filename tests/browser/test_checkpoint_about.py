"""The Generate tab says what the selected checkpoint was trained on and what it expects (issue 29, item 5)."""
from __future__ import annotations

from tests.browser import tour

_ABOUT = "() => document.querySelector('#gen-about').innerText"


def test_the_generate_tab_says_what_each_checkpoint_expects(lab):
    """Regression: nothing on the page said the translation model was trained on the Bible, or that `reverse`
    expects lowercase letters. The line under the tab's intro follows the checkpoint list."""
    page = lab.page
    tour.show_tab(page, "generate")
    assert "synthetic task reverse" in page.evaluate(_ABOUT) and "lowercase letters" in page.evaluate(_ABOUT)
    tour.select_checkpoint(page, "translate-en-es")
    page.wait_for_function("() => document.querySelector('#gen-about').innerText.includes('Bible')")
    assert "English Bible verse" in page.evaluate(_ABOUT)
    tour.screenshot(page, "/tmp/classroom-about.png")


def test_beside_the_checkpoint_list_and_the_attention_input_too(lab):
    """Regression (issue 29, item 5): only the Generate tab said what a checkpoint was trained on; where the
    checkpoint is chosen (the header's list) and in the Attention tab nothing did. Now a line beside the list (on
    its row, to its right) and one under the Attention tab's input say it, and follow the list (the same text as
    the Generate tab's: store.about)."""
    page = lab.page
    tour.show_tab(page, "attention")
    tour.select_checkpoint(page, "translate-en-es")
    for line in ("#ckpt-about", "#att-about"):
        page.wait_for_function(f"() => document.querySelector('{line}').innerText.includes('English Bible verse')")
    tour.select_checkpoint(page, "reverse")
    for line in ("#ckpt-about", "#att-about"):
        page.wait_for_function(f"() => document.querySelector('{line}').innerText.includes('lowercase letters')")
    about, chooser = page.locator("#ckpt-about").bounding_box(), page.locator("#ckpt").bounding_box()
    assert about["x"] >= chooser["x"] + chooser["width"] and about["y"] < chooser["y"] + chooser["height"], (about,
                                                                                                          chooser)
    text = page.locator("#att-text").bounding_box()
    assert 0 <= page.locator("#att-about").bounding_box()["y"] - (text["y"] + text["height"]) < 40
