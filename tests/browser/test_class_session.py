"""A class session in real browsers (issue 39): a teacher at a projector (1280x800) and three students, each in a
browser context of its own (their own cookie, so their own browser key), one of them a phone (390x844).

One test walks the whole lesson, as a class would: start, join by the link and by the code, push a view (every
student's cells equal the teacher's heatmap), ask which key a query reads, answer by tapping a cell and by a choice,
the projector's split counting the answers live, reveal (each student told whether it was right), the CSV with the
three answers, a student's push, reveal and end refused in words, a second class whose student sees nothing of the
first, and the end of the class said on a student's page. With ATTENTION_LAB_SCREENSHOTS=1 it saves the projector's
split and a phone's question and reveal for the README (docs/screenshots/class-*.png).
"""
from __future__ import annotations

import csv
import io
import re

import pytest

from tests.browser import tour


# the cells and bars as plotly drew them (its _fullData: typed arrays, read as plain numbers; null where masked)
CELLS = """(id) => { const p = document.querySelector(`#${id} .js-plotly-plot`);
    return p && p._fullData ? p._fullData[0].z.map(row => Array.from(row)) : null; }"""
BARS = """() => { const p = document.querySelector('#class-split .js-plotly-plot');
    return p && p._fullData ? Array.from(p._fullData[0].y) : null; }"""
# the counts of the class's guesses as drawn (the text of each cell of the heatmap; "" where no row was asked)
GUESSES = """() => { const p = document.querySelector('#class-guesses .js-plotly-plot');
    return p && p._fullData ? p._fullData[0].text.map(row => Array.from(row)) : null; }"""
SIZES = {}  # what the readable figures measured: the run's summary (pytest -s prints it)


def readable(page, sel: str, what: str) -> None:
    """The heatmap under `sel` as drawn: cells and labels at least visualize.sizes' least (test_fit_the_screen's
    measure and rule: tests/browser/figure_checks.py)."""
    from tests.browser.figure_checks import cells as _cells, readable as _readable

    cells = _cells(page, sel)
    SIZES[what] = (f"cells {cells['column']:.0f} x {cells['row']:.0f} px, labels {cells['tick_font']:.0f} px, "
                   f"counts {cells['cell_font'] or 0:.0f} px, figure {cells['width']:.0f} px in {cells['box']} px")
    print(what, SIZES[what])
    _readable(cells, what)


def device(browser, app_url: str, size: dict, query: str = ""):
    """A page of its own browser context (tour.new_page), at `size`, open on the app (with `query`)."""
    page, guard = tour.new_page(browser)
    page.set_viewport_size(size)
    page.goto(app_url + query, timeout=tour.TIMEOUT_MS)
    page.get_by_role("tab", name="Class", exact=True).wait_for()
    return page


def text(page, selector: str) -> str:
    return (page.locator(selector).text_content() or "").strip()


def wait_text(page, selector: str, pattern: str) -> str:
    """Wait until the text of `selector` matches `pattern` (a regular expression); return it."""
    page.wait_for_function("""([sel, pat]) => new RegExp(pat).test((document.querySelector(sel) || {}).textContent
                              || '')""", arg=[selector, pattern], timeout=tour.TIMEOUT_MS)
    return text(page, selector)


def refused(page, api: str, data: list) -> str:
    """What the server answers when this page's browser (its cookie, so its key) calls a teacher's endpoint `api`
    with `data` (the page shows a student no teacher's button: the call is made as the page would make it)."""
    return page.evaluate("""async ([api, data]) => {
        const config = await (await fetch('config')).json();
        const dep = config.dependencies.find(d => d.api_name === api);
        const answer = await fetch('gradio_api/run/predict', {method: 'POST', headers: {'Content-Type':
            'application/json'}, body: JSON.stringify({data, fn_index: dep.id, session_hash: 'k3j4h5g6f7a',
            event_data: null, trigger_id: null})});
        return await answer.text();
    }""", [api, data])


def hidden_on_the_projector(teacher) -> bool:
    """Whether the teacher's Attention tab hides its heatmap (the model's own answer): looked at in that tab."""
    tour.show_tab(teacher, "attention")
    hidden = teacher.locator("#att-one").evaluate("e => getComputedStyle(e).visibility") == "hidden"
    tour.show_tab(teacher, "class")
    return hidden


def test_a_teacher_and_three_students_run_a_lesson(browser, app_url):
    teacher = device(browser, app_url, tour.PROJECTOR)
    tour.visit(teacher, "attention")  # the page computes `attention` on `reverse` at its load
    teacher.locator("#att-one .main-svg").first.wait_for()
    tour.show_tab(teacher, "class")
    teacher.locator("#class-start").click()
    code = re.sub(r"\s", "", wait_text(teacher, "#class-shown-code", r"[A-Z0-9] [A-Z0-9]"))
    assert re.fullmatch(r"[A-HJ-KM-NP-Z2-9]{6}", code), code
    assert f"?class={code}" in text(teacher, "#class-link")
    assert teacher.locator("#class-qr svg").count() == 1
    qr = teacher.locator("#class-qr svg").bounding_box()
    assert qr["width"] >= 300, f"the QR code is {qr['width']:.0f} px wide on the projector"  # read from the back
    assert "attention-lab-key" in {c["name"] for c in teacher.context.cookies()}
    assert "key" not in text(teacher, "#class-link").lower()  # the link carries nothing of the teacher's secret

    teacher.locator("#class-push").click()
    wait_text(teacher, "#class-said", "Every device")
    phone = device(browser, app_url, tour.PHONE, f"?class={code.lower()}")  # by the link (a phone's small letters)
    laptops = [device(browser, app_url, tour.PROJECTOR) for _ in range(2)]
    for page in laptops:  # by the code, typed
        tour.show_tab(page, "class")
        page.locator("#class-code-box input, #class-code-box textarea").first.fill(code)
        page.locator("#class-join").click()
    students = [phone] + laptops
    numbers = sorted(int(re.search(r"student (\d+)", wait_text(p, "#class-status", r"student \d+")).group(1))
                     for p in students)
    assert numbers == [1, 2, 3]
    wait_text(teacher, "#class-status", "3 students")
    truth = teacher.evaluate(CELLS, "att-one")
    for page in students:
        page.locator("#class-figure .main-svg").first.wait_for()
        assert page.evaluate(CELLS, "class-figure") == truth  # the very cells the teacher's heatmap shows

    teacher.locator("#class-ask").click()  # about the first query row (the default)
    wait_text(teacher, "#class-said", "Question 1 asked")
    right = max(range(len(truth[0])), key=lambda j: truth[0][j] if truth[0][j] is not None else -1)
    wrong = (right + 1) % len(truth[0])
    for page in students:
        page.locator("#class-grid button.tap-cell").first.wait_for()
        assert not page.locator("#class-figure .main-svg").first.is_visible()  # the model's answer hidden meanwhile
    if tour.SHOTS:
        tour.small_screenshot(phone, tour.SHOTS / "class-question-390.png")
    phone.locator(f"#class-grid button.tap-cell[data-column='{right}']").click()  # by tapping the cell
    wait_text(phone, "#class-line", "Your answer")
    assert phone.locator("#class-grid button.tap-cell.chosen").get_attribute("data-column") == str(right)
    wait_text(teacher, "#class-question", "1 of 3 answered")
    laptops[0].locator("#class-choices label").nth(wrong).click()  # by a choice
    wait_text(laptops[0], "#class-line", "Your answer")
    laptops[1].locator(f"#class-grid button.tap-cell[data-column='{right}']").click()
    wait_text(teacher, "#class-question", "3 of 3 answered")
    teacher.wait_for_function(f"() => {{ const y = ({BARS})(); return y && y.reduce((a, b) => a + b, 0) === 3; }}")
    bars = teacher.evaluate(BARS)
    assert bars[right] == 2 and bars[wrong] == 1, bars
    teacher.wait_for_function(f"""() => {{ const t = ({GUESSES})();
        return t && t[0].filter(v => v !== '').map(Number).reduce((a, b) => a + b, 0) === 3; }}""")
    guessed = teacher.evaluate(GUESSES)  # live on the projector: the row asked, a count per key; the rest blank
    assert guessed[0][right] == "2" and guessed[0][wrong] == "1", guessed
    assert all(v == "" for row in guessed[1:] for v in row) and len(guessed) == len(truth)
    readable(teacher, "#class-guesses", "guesses, projector 1280x800, live")
    for page in students:  # a student sees no one's guesses before the reveal
        assert page.locator("#class-guesses .main-svg").count() == 0
    assert hidden_on_the_projector(teacher)
    if tour.SHOTS:
        tour.small_screenshot(teacher, tour.SHOTS / "class-split-1280.png")  # the whole page: the split is under the QR code

    assert laptops[1].locator("#class-push, #class-reveal, #class-end").count() == 0  # not on a student's page
    for api, data in (("class_push", [code, None, None, None, "cross", 1, 2, "weights", False, "anti-diagonal",
                                      "att-one", None, None, "", "", -1, 128, 100]),
                      ("class_reveal", [code]), ("class_end", [code])):
        said = refused(laptops[1], api, data)
        assert "only the teacher of this class can" in said, said

    teacher.locator("#class-reveal").click()
    assert "Right!" in wait_text(phone, "#class-line", "Right|Not this time")
    assert "Not this time" in wait_text(laptops[0], "#class-line", "Right|Not this time")
    assert "Right!" in wait_text(laptops[1], "#class-line", "Right|Not this time")
    for page in students:
        page.locator("#class-figure .main-svg").first.wait_for()
        assert page.evaluate(CELLS, "class-figure") == truth
        page.locator("#class-split .main-svg").first.wait_for()
        page.locator("#class-guesses .main-svg").first.wait_for()  # beside the model's heatmap
        assert page.evaluate(GUESSES) == guessed
    readable(phone, "#class-guesses", "guesses, phone 390x844, revealed")
    readable(laptops[1], "#class-guesses", "guesses, laptop 1280x800, revealed")
    phone.locator("#class-figure").scroll_into_view_if_needed()
    readable(phone, "#class-figure", "model's heatmap, phone 390x844, revealed")
    assert not hidden_on_the_projector(teacher)
    if tour.SHOTS:
        tour.small_screenshot(phone, tour.SHOTS / "class-reveal-390.png")

    teacher.locator("#class-csv").click()
    link = teacher.locator("#class-answers a").first
    link.wait_for()
    rows = list(csv.DictReader(io.StringIO(teacher.request.get(link.get_attribute("href")).text())))
    chose_wrong = int(re.search(r"student (\d+)", text(laptops[0], "#class-status")).group(1))
    assert sorted((r["question"], r["student"], r["right"]) for r in rows) == [
        ("1", str(n), "no" if n == chose_wrong else "yes") for n in (1, 2, 3)]

    # the demo the view shows (the page opens on `reverse` and "attention": Reading backwards) asks its own question
    teacher.locator("#class-ask-demo").click()
    wait_text(teacher, "#class-said", "Question 2 asked")
    wait_text(phone, "#class-question", "Reading backwards")
    phone.locator("#class-choices label").first.wait_for()
    assert phone.locator("#class-grid button").count() == 0  # a question of choices: no grid to tap
    phone.get_by_text("letter 7 (", exact=False).first.click()
    wait_text(phone, "#class-line", "Your answer")
    teacher.locator("#class-reveal").click()
    said = wait_text(phone, "#class-line", "Right|Not this time")
    before = teacher.locator("#class-answers a").first.get_attribute("href")
    teacher.locator("#class-csv").click()  # the verdict the phone read is the class record's (and the CSV's)
    teacher.wait_for_function("""(old) => { const a = document.querySelector('#class-answers a');
                                            return a && a.getAttribute('href') !== old; }""", arg=before)
    rows = list(csv.DictReader(io.StringIO(teacher.request.get(
        teacher.locator("#class-answers a").first.get_attribute("href")).text())))
    on_phone = re.search(r"student (\d+)", text(phone, "#class-status")).group(1)
    row = next(r for r in rows if r["question"] == "2" and r["student"] == on_phone)
    assert row["answer"].startswith("letter 7 (") and row["right"] == ("yes" if "Right" in said else "no"), (row, said)

    other = device(browser, app_url, tour.PROJECTOR)  # a second class: its student sees nothing of the first
    tour.show_tab(other, "class")
    other.locator("#class-start").click()
    other_code = re.sub(r"\s", "", wait_text(other, "#class-shown-code", r"[A-Z0-9] [A-Z0-9]"))
    newcomer = device(browser, app_url, tour.PHONE, f"?class={other_code}")
    wait_text(newcomer, "#class-status", "student 1 of class " + other_code)
    newcomer.wait_for_timeout(2500)  # two polls
    assert newcomer.locator("#class-figure .main-svg").count() == 0
    assert text(newcomer, "#class-question") == "" and newcomer.locator("#class-grid button").count() == 0

    teacher.locator("#class-end").click()
    for page in students:
        wait_text(page, "#class-status", "has ended")
    for page in students + [teacher, other, newcomer]:
        page.context.close()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def on_port(port: int, seconds: float = 30):
    """(demo, url) of the app started on 127.0.0.1:`port`, tried again for up to `seconds` while the port is not
    free yet (the app just closed on it)."""
    import time

    import app

    end = time.monotonic() + seconds
    while True:
        try:
            demo, (_, url, _) = app.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True,
                                           quiet=True)
            return demo, url
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(1)


def test_a_restart_of_the_app_tells_a_students_page_in_words_that_the_class_ended(browser):
    """The class lives in the app's process: the page of a student who joined by the link and of one who typed the
    code, open while the app stops and a new one starts on the same address, each say in words that the class is
    gone and that a restart may be why (gradio's page reloads itself when its server comes back: the class's code
    is in the page's address then, the join link's or the one typed, and the join says so; a page that did not
    reload is told by its next poll). An app of its own (the module's is shared), restarted as a new process
    starts: no class (store.classes.CLASSES.clear, the one registry, emptied).
    Failed before: the page of the student who typed the code reloaded to an empty Class tab, told nothing."""
    from store.classes import CLASSES

    port = free_port()  # not gradio's range, which other apps take from: the restart needs this one again
    demo, url = on_port(port)
    try:
        teacher = device(browser, url, tour.PROJECTOR)
        tour.show_tab(teacher, "class")
        teacher.locator("#class-start").click()
        code = re.sub(r"\s", "", wait_text(teacher, "#class-shown-code", r"[A-Z0-9] [A-Z0-9]"))
        by_link, by_code = device(browser, url, tour.PHONE, f"?class={code}"), device(browser, url, tour.PHONE)
        tour.show_tab(by_code, "class")
        by_code.locator("#class-code-box input, #class-code-box textarea").first.fill(code)
        by_code.locator("#class-join").click()
        for page in (by_link, by_code):
            wait_text(page, "#class-status", f"student \\d of class {code}")
        demo.close()
        CLASSES.clear()  # what a new process starts with
        by_link.wait_for_timeout(2500)  # polls while the app is down
        demo, _ = on_port(port)
        for page in (by_link, by_code):
            said = wait_text(page, "#class-status", "has ended|no class has the code")
            assert code in said and "restarted" in said, said
        for page in (teacher, by_link, by_code):
            page.context.close()
    finally:
        demo.close()
