"""What the Class tab runs and draws in the browser (tabs/classroom/page.py wires each): the page's address, a
tap on the grid, the grid's style, the projector's hidden figure while a question is open, the class's code kept in
the page's address."""

# the page's own address (the link students open is on it: the server never guesses its public address)
PAGE_JS = "(base) => window.location.origin + window.location.pathname"
# a tap on a cell of the grid sends its column (the grid is replaced whole at each question: one listener on its box)
TAP_JS = """element.addEventListener('click', (e) => {
    const cell = e.target.closest('button.tap-cell');
    if (cell) trigger('click', {column: cell.dataset.column});
});"""
TAP_CSS = """
.tap-grid-box {overflow-x: auto; max-width: 100%}
.tap-grid {border-collapse: collapse; font-size: 15px}
.tap-grid th {font-weight: normal; padding: 2px 4px; white-space: nowrap}
.tap-grid td {padding: 1px; border: 1px solid #ddd}
.tap-grid td.blank {background: #f4f4f4; min-width: 28px; height: 28px}
.tap-grid button.tap-cell {min-width: 36px; height: 36px; width: 100%; border: 2px solid rgb(66,146,198);
  background: white; border-radius: 4px; cursor: pointer; font-size: 18px}
.tap-grid button.tap-cell.chosen {background: rgb(230,85,13); color: white; border-color: rgb(230,85,13)}
.tap-grid tr.asked th {font-weight: bold}
"""
# While a question is open the teacher's open tab (its figure: the model's own answer) is hidden on the projector
ASKING_JS = "() => { document.body.classList.add('class-asking'); }"
SHOWN_JS = "(code) => { document.body.classList.remove('class-asking'); return code; }"  # before the call
# A code typed and joined goes into the page's address (?class=CODE), as a join link's is: a reload of the page (the
# page reloads itself when the app restarts) joins again, or says in words that the class is gone
# The history entry keeps its state: the page's router (SvelteKit) keeps its own in it, and a null state made a
# joined page lose its poll timer (tests/browser/test_class_session.py, 2 runs in 4)
REMEMBER_JS = """(code) => { if (code) { const u = new URL(window.location.href); u.searchParams.set('class', code);
    window.history.replaceState(window.history.state, '', u); } }"""
