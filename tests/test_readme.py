"""README.md tells a newcomer the truth (issue 41, item 7): under 20 KB, every relative link resolves, every shell
command in it runs here or is marked `# needs the Hub`, and its Python runs as printed: each line that ends in a
comment starting with what the expression gives (`out.logits.shape  # torch.Size([1, 12, 100])`) is checked
against the expression's value."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def test_the_readme_is_short_and_its_links_resolve():
    assert len(README.encode()) < 20_000
    links = re.findall(r"\]\(([^)#]+)\)", README)
    assert links, "the README links its docs"
    missing = [link for link in links if not link.startswith("http") and not (ROOT / link).exists()]
    assert not missing, missing
    for doc in ROOT.glob("docs/*.md"):  # the docs' own relative links too
        text = doc.read_text(encoding="utf-8")
        bad = [link for link in re.findall(r"\]\(([^)#]+)\)", text)
               if not link.startswith("http") and not (doc.parent / link).exists()]
        assert not bad, (doc.name, bad)


def shell_commands() -> list[str]:
    lines = [line.strip() for block in blocks("bash") for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_every_shell_command_is_one_this_repository_can_run_or_is_marked_as_needing_the_hub():
    """Each command's files exist; `python -m X` names a module with a `--help` (asked once per module: the README's
    four Hub commands name one, and each ask starts a Python that imports torch); Hub downloads say so."""
    commands = shell_commands()
    assert "pip install -r requirements.txt && python app.py" in commands
    assert "pip install -r requirements-dev.txt && python -m pytest" in commands
    modules = {}  # module -> the first command that names it
    for command in commands:
        for requirements in re.findall(r"pip install -r (\S+)", command):
            assert (ROOT / requirements).is_file(), command
        module = re.search(r"python -m ([\w.]+)", command)
        if module and module.group(1) != "pytest":
            if "transformer.pretrained" in module.group(1):
                assert "# needs the Hub" in command, command
            modules.setdefault(module.group(1), command)
    for module, command in modules.items():
        found = subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True,
                               timeout=120)
        assert found.returncode == 0, (command, found.stderr[-500:])


@pytest.mark.slow
def test_the_apps_command_starts_the_app_on_loopback():
    """`python app.py` prints its local URL on 127.0.0.1 (port from GRADIO_SERVER_PORT, as the README says)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, GRADIO_SERVER_PORT=str(port), GRADIO_ANALYTICS_ENABLED="False")
    app = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    try:
        deadline, seen = time.monotonic() + 180, []
        while time.monotonic() < deadline:
            line = app.stdout.readline()
            if not line:
                break
            seen.append(line)
            if "Running on local URL" in line:
                assert f"http://127.0.0.1:{port}" in line, line
                return
        pytest.fail("no 'Running on local URL' line: " + "".join(seen[-20:]))
    finally:
        app.kill()
        app.wait(timeout=30)


@pytest.mark.slow
def test_the_python_in_the_readme_runs_and_gives_what_its_comments_say():
    """The README's Python blocks run in order in one namespace (from the repository's root); a line `expr  #
    value...` has `repr(expr) == value`, and the patching figures its comments give are the grids' own."""
    code = "\n".join(blocks("python"))
    namespace: dict = {}
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(code, "README.md", "exec"), namespace)
        checked = 0
        for line in code.splitlines():
            match = re.fullmatch(r"(\S[^#=]*?)\s+#\s*(torch\.Size\(\[[^\]]*\]\))(:.*)?", line)
            if match:
                assert repr(eval(match.group(1), namespace)) == match.group(2), line
                checked += 1
        assert checked >= 3
        grid = eval("head_patching(model, pair, metric).values", namespace)  # the patching comments' figures
        said = re.search(r"layer 0 head 1 restores ([\d.]+), layer 1 head 0 ([\d.]+)", code)
        assert (round(float(grid[0, 1]), 2), round(float(grid[1, 0]), 2)) == tuple(map(float, said.groups()))
        path = eval('path_patching(model, pair, metric, ("decoder self", 0, 1))["decoder self"].values[:, 1, 0]',
                    namespace)
        said = re.search(r"query, key, value: ([\d.]+), ([\d.]+), ([\d.]+)", code)
        assert [abs(round(float(v), 2)) for v in path] == list(map(float, said.groups()))
    finally:
        os.chdir(cwd)
