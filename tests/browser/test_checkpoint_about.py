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
