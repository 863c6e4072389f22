"""One owner per rule, checked in the source: how encoder-decoder ids are assembled lives in transformer/encoding.py
alone, and the library's modules import each other without a circle.

Like tests/test_dependencies.py this parses the source (nothing is imported), so code no test runs is checked too.
"""
from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# `ids + [eos_id]`, `[cfg.bos_id] + target`, `torch.full(..., cfg.eos_id)`: the encoder-decoder input rule written
# out by hand (the shapes every duplicate of it took before transformer/encoding.py owned it)
ASSEMBLY = re.compile(r"\+\s*\[[\w.]*\b(?:eos_id|bos_id)\]|\[[\w.]*\b(?:eos_id|bos_id)\]\s*\+"
                      r"|\[\s*[\w.]*\b(?:eos_id|bos_id)\s*\]\s*\*|full\(.*\b(?:eos_id|bos_id)\b")


def assembly_lines(source: str) -> list[str]:
    """The code lines (comments left out) that assemble ids with <s> or </s> by hand."""
    found = []
    for line in source.splitlines():
        code = line.split("#", 1)[0]
        if ASSEMBLY.search(code):
            found.append(line.strip())
    return found


@pytest.mark.parametrize("line, caught", [
    ("src = pad([tokenizer.encode(s) + [cfg.eos_id] for s, _ in pairs], cfg.pad_id)", True),
    ("tgt = [cfg.bos_id] + tok.encode(t) + [cfg.eos_id]", True),
    ("ids = ids + [model.config.eos_id]", True),
    ("dec_in = [model.config.bos_id] + list(target_ids or [])", True),
    ("src = torch.full((n_seqs, 1), cfg.eos_id, device=model.device)", True),
    ("read = kept + [eos_id]", True),
    ("self.tokens = torch.full((batch, 1), cfg.bos_id, device=dev)  # the decoder starts from <s>", True),
    ("return [config.bos_id] + list(target), list(target) + [config.eos_id]", True),
    ("done |= token[:, 0] == cfg.eos_id", False),
    ("src = source_batch(tokenizer, sources, config)  # source + [eos_id], padded", False),
])
def test_the_scanner_sees_hand_assembly(line, caught):
    """Oracle: hand-written lines, each known to assemble ids by hand or not, so the scan below cannot pass
    vacuously."""
    assert bool(assembly_lines(line)) == caught


APP_ROOMS = ("server", "store", "tabs", "widgets")  # the app's packages (docs/architecture.md, "What is where")
APP_FILES = ("app.py", "checks.py", "limits.py")  # and its top-level modules

# Where <s> or </s> may still be written: the owner, and the decoding loops that start the decoder from <s> (the
# state a generation starts from, not an input being assembled).
OWNERS = {"transformer/encoding.py"}
DECODING_START = {"transformer/generate.py": 2}  # _Decoder and greedy_batch start every row from <s>


def test_only_encoding_assembles_ids_with_bos_and_eos():
    """Invariant: no module of transformer/ or the app (its rooms and app.py) other than transformer/encoding.py
    writes the encoder-decoder input rule (source + </s>, <s> + target) by hand; they all call transformer.encoding."""
    files = [p for package in ("transformer",) + APP_ROOMS for p in sorted((ROOT / package).rglob("*.py"))]
    files += [ROOT / name for name in APP_FILES]
    assert len(files) > 20  # the packages are really there
    found = {}
    for path in files:
        name = path.relative_to(ROOT).as_posix()
        lines = assembly_lines(path.read_text(encoding="utf-8"))
        if name not in OWNERS and len(lines) > DECODING_START.get(name, 0):
            found[name] = lines
    assert found == {}
    assert assembly_lines((ROOT / "transformer/encoding.py").read_text(encoding="utf-8"))  # the owner is seen


def module_imports(path: Path, package_root: Path) -> set[str]:
    """Dotted names of the modules of the package that the file imports (relative or absolute, anywhere in it)."""
    parts = list(path.relative_to(package_root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    here = parts if path.name == "__init__.py" else parts[:-1]  # the package the file is in
    top = package_root.name
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            module = ".".join(base + (node.module.split(".") if node.module else []))
            if module.split(".")[0] != top:
                continue
            names.add(module)
            names |= {f"{module}.{a.name}" for a in node.names}  # `from . import probe` names a module
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names if a.name.split(".")[0] == top}
    return names


def import_graph(package: str) -> dict[str, set[str]]:
    root = ROOT / package
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return {name: {m for m in module_imports(path, root) if m in modules and m != name}
            for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Circles of imports among modules (a depth-first search: at least one per circle, none when there is none)."""
    found, state = [], {}

    def visit(node, path):
        state[node] = "open"
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == "open":
                found.append(path[path.index(dep):] + [dep])
            elif dep not in state:
                visit(dep, path + [dep])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_the_cycle_finder_finds_a_circle():
    """Oracle: a hand-made graph a -> b -> c -> a has one circle; a -> b, a -> c has none."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b", "c"}, "b": set(), "c": set()}) == []


def test_the_library_has_no_import_circle():
    """Invariant: transformer/'s modules import each other without a circle (the CLI imported the Trainer, which
    imported the CLI for `python -m transformer.train`, until transformer/train/__main__.py took that job)."""
    graph = import_graph("transformer")
    assert "transformer.train.cli" in graph["transformer.train.__main__"]
    assert "transformer.interpretability.analysis" in graph["transformer.interpretability.ablation"]  # in a function
    assert cycles(graph) == []
    graph["transformer.train.trainer"].add("transformer.train.cli")  # the circle there was, put back: it is found
    assert cycles(graph)


def unresolved_imports(source: str, folder: Path) -> list[str]:
    """The relative imports of a file in `folder` (anywhere in it, in functions too) that name no module or package
    there."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = folder
            for _ in range(node.level - 1):
                base = base.parent
            target = base.joinpath(*node.module.split(".")) if node.module else base
            if not (target.with_suffix(".py").exists() or (target / "__init__.py").exists()):
                found.append(f"{node.lineno}: {'.' * node.level}{node.module or ''}")
    return found


def test_every_relative_import_names_a_module_that_exists():
    """Invariant: every relative import of the library resolves, the ones inside functions too (they run only when
    called: after cli.py moved into train/, its `from .checkpoint import save_checkpoint` under --ship failed at the
    end of a run). Oracle: that line, in a file of transformer/train/, is found; `..checkpoint` is not."""
    found = {p.relative_to(ROOT).as_posix(): unresolved_imports(p.read_text(encoding="utf-8"), p.parent)
             for p in sorted((ROOT / "transformer").rglob("*.py"))}
    assert {name: lines for name, lines in found.items() if lines} == {}
    ship = "def ship():\n    from .checkpoint import save_checkpoint\n    from ..checkpoint import load_checkpoint\n"
    assert unresolved_imports(ship, ROOT / "transformer" / "train") == ["2: .checkpoint"]


def package_edges(graph: dict[str, set[str]], depth: int = 2) -> set[tuple[str, str]]:
    """(package, package) for every import between two packages: module names cut to their first `depth` parts
    (transformer.train.cli -> transformer.train)."""
    top = lambda name: ".".join(name.split(".")[:depth])  # noqa: E731
    return {(top(a), top(b)) for a, deps in graph.items() for b in deps if top(a) != top(b)}


def test_training_and_interpretability_import_one_way():
    """Invariant (issue 26, item 6): transformer.train may use transformer.interpretability (the CLI's cards, the
    comparison's attended distance, the induction watch's scores), never the reverse, so the two packages make no
    circle; and the Trainer itself imports no interpretability module: it reports attention through its
    `attention` callback. Oracle: the trainer -> probe import it had, put back, is found."""
    graph = import_graph("transformer")
    edges = package_edges(graph)
    assert ("transformer.train", "transformer.interpretability") in edges  # the scan sees the allowed direction
    assert ("transformer.interpretability", "transformer.train") not in edges
    assert not {m for m in graph["transformer.train.trainer"] if m.startswith("transformer.interpretability")}
    graph["transformer.interpretability.phase_change"].add("transformer.train.run")  # the edge there was
    assert ("transformer.interpretability", "transformer.train") in package_edges(graph)


def gpu_rule_breaks(source: str) -> list[str]:
    """What @gpu functions (store.gpu) of the source do against store/gpu.py's rule: each is wrapped in @handler (its
    errors reach the user), and plain values go in and out: nothing of gradio in its parameters or body (no
    gr.update yielded from the worker), and no argument it calls (a gr.Progress or other callback into the app)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        names = [d.func.id if isinstance(d, ast.Call) and isinstance(d.func, ast.Name) else getattr(d, "id", None)
                 for d in node.decorator_list]
        if "gpu" not in names:
            continue
        if "handler" not in names:
            found.append(f"{node.name}: no @handler")
        if any(isinstance(n, ast.Name) and n.id == "gr" for part in (node.args, *node.body) for n in ast.walk(part)):
            found.append(f"{node.name}: uses gradio")
        params = {a.arg for a in node.args.args + node.args.kwonlyargs}
        called = sorted({n.func.id for part in node.body for n in ast.walk(part)
                         if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in params})
        found += [f"{node.name}: calls its argument {name} (a callback into the app)" for name in called]
    return found


def test_the_gpu_rule_scanner_sees_each_break():
    """Oracle: hand-written @gpu functions, one following the rule and four breaking it as tabs/ once did."""
    good = "@gpu(duration=10)\n@handler\ndef f(ref, text):\n    return ref.load(), text\n"
    assert gpu_rule_breaks(good) == []
    assert gpu_rule_breaks("@gpu(duration=10)\ndef f(ref):\n    return ref\n") == ["f: no @handler"]
    assert gpu_rule_breaks("@gpu(30)\n@handler\ndef f(ref):\n    yield ref, gr.update()\n") == ["f: uses gradio"]
    assert gpu_rule_breaks("@gpu(60)\n@handler\ndef f(ref, progress=gr.Progress()):\n    return 1\n") == \
        ["f: uses gradio"]
    assert gpu_rule_breaks("@gpu(60)\n@handler\ndef f(ref, progress):\n"
                           "    return run(ref, lambda d, t: progress((d, t)))\n") == \
        ["f: calls its argument progress (a callback into the app)"]


def test_every_gpu_function_takes_and_gives_plain_values():
    """Invariant: store/gpu.py stays the one place that knows ZeroGPU, and every function it lends a GPU follows its
    rule: wrapped in @handler, plain values in and out (the app around it turns them into gradio updates)."""
    sources = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
               for p in sorted((ROOT / "tabs").rglob("*.py"))}
    assert sum(s.count("@gpu(") for s in sources.values()) >= 10  # the scan sees the GPU functions
    assert {name: gpu_rule_breaks(s) for name, s in sources.items() if gpu_rule_breaks(s)} == {}


# The forms a limit took outside limits.py before it owned them all (issue 26): a module's or class's constant
# given a number (GONE_KEPT = 8), the concurrency group of trainings written as "train", a number given to a keyword
# that bounds something, and a control or check whose range is two numbers written in the call (the Generate tab's
# sliders and their checks, the Positional tab's 8-512).
BOUND_KEYWORDS = {"concurrency_limit", "default_concurrency_limit", "max_size", "max_length", "maxsize",
                  "max_exports", "per_browser", "max_models", "size", "delete_cache", "state_session_capacity",
                  "max_file_size", "max_seconds", "max_tokens"}
RANGED_CALLS = {"Slider", "Number", "check_number", "real_number", "check_index"}


def _number(node) -> bool:
    """A number written in the source: 8, -1, 2**31 - 1, 5 << 29, (600, 1800)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _number(node.operand)
    if isinstance(node, ast.BinOp):
        return _number(node.left) and _number(node.right)
    if isinstance(node, ast.Tuple):
        return bool(node.elts) and all(_number(e) for e in node.elts)
    return False


def written_limits(source: str) -> list[str]:
    """The limits a module writes itself instead of reading them from limits.py, in the forms above (a cache of one
    value, `maxsize=1`, is a memo, not a bound; `maxsize=None` neither)."""
    found = []
    tree = ast.parse(source)
    for scope in [tree] + [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]:  # NAME = 8, module or class
        found += [f"{t.id} = {ast.unparse(n.value)}" for n in scope.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                  and n.value is not None and _number(n.value)
                  for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                  if isinstance(t, ast.Name) and t.id.isupper()]
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "concurrency_id" and \
                isinstance(node.value, ast.Constant) and node.value.value == "train":
            found.append("concurrency_id='train'")
        elif isinstance(node, ast.keyword) and node.arg in BOUND_KEYWORDS and _number(node.value) and \
                not (node.arg == "maxsize" and isinstance(node.value, ast.Constant) and node.value.value == 1):
            found.append(f"{node.arg}={ast.unparse(node.value)}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):  # a default: def f(max_exports=32)
            args = node.args.args + node.args.kwonlyargs
            defaults = [None] * (len(node.args.args) - len(node.args.defaults)) + node.args.defaults + \
                node.args.kw_defaults
            found += [f"{a.arg}={ast.unparse(d)}" for a, d in zip(args, defaults)
                      if d is not None and a.arg in BOUND_KEYWORDS and _number(d)]
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            numbers = [a for a in node.args if _number(a)]
            if name in RANGED_CALLS and len(numbers) >= 2:
                found.append(f"{name}({', '.join(ast.unparse(a) for a in node.args)})")
            elif name in ("RecordCache", "lru_cache") and numbers:
                found.append(f"{name}({ast.unparse(numbers[0])})")
    return found


@pytest.mark.parametrize("source, caught", [
    ('x.click(f, None, None, concurrency_id="train")', True),
    ("x.click(f, None, None, concurrency_id=TRAINING_GROUP)", False),
    ('x.click(f, None, None, concurrency_id="draw", concurrency_limit=8)', True),
    ("x.click(f, None, None, concurrency_limit=DRAW_CONCURRENCY)", False),
    ('temperature = Slider(0, 2, value=1.0, step=0.05, label="Temperature (sample)")', True),
    ('temperature = Slider(*GENERATE["temperature"], value=1.0, step=0.05)', False),
    ('length = check_number(length, "Positions", 8, 512, integer=True)', True),
    ('seed = check_number(seed, "Seed", -1, 2**31 - 1, integer=True)', True),
    ('seed = check_number(seed, "Seed", *GENERATE["seed"], integer=True)', False),
    ("demo.queue(max_size=2048, default_concurrency_limit=4, api_open=False)", True),
    ('gr.Blocks(title="Attention Lab", delete_cache=(600, 1800))', True),
    ('gr.Textbox(label="Hub dataset", max_length=200)', True),
    ("LENSES = RecordCache(32)", True),
    ("@functools.lru_cache(maxsize=64)\ndef f(x):\n    return x", True),
    ("@functools.lru_cache(maxsize=1)\ndef f():\n    return 1", False),
    ("def __init__(self, max_exports: int = 32, parent=None):\n    pass", True),
    ("USER_MODELS = UserModels(per_browser=3, max_models=STORED_MODELS)", True),
    ("layer = index_control(4, label='Head')", False),
    ("t = check_index(position, 'position', T)", False),
    ("TEXT_BLOCK = 64  # context of a text model trained here", True),
    ("class UserModels:\n    GONE_KEPT = 8\n    def f(self):\n        n = 8", True),
    ("def f():\n    n = 8\n    return n", False),
    ('FIGURE_OUTPUTS = ("record", "one")', False),
])
def test_the_limit_scanner_sees_each_form(source, caught):
    """Oracle: hand-written lines, each known to write a limit in one of the forms above or to read it from
    limits.py, so the scan below cannot pass vacuously."""
    assert bool(written_limits(source)) == caught


def test_no_limit_is_written_outside_limits_py():
    """Invariant (docs/safety.md): every bound of the app is read from limits.py; no module of the
    app's rooms, and not app.py, writes one in the forms the limits took before (the scan above)."""
    files = [p for package in APP_ROOMS for p in sorted((ROOT / package).rglob("*.py"))]
    files += [ROOT / name for name in APP_FILES if name != "limits.py"]
    assert len(files) > 30
    found = {p.relative_to(ROOT).as_posix(): written_limits(p.read_text(encoding="utf-8")) for p in files}
    assert {name: lines for name, lines in found.items() if lines} == {}


# The room the markers take: `max_len - 1` (room for </s> or <s>), `max_target_len + 1` (the target and its </s>),
# `max(max_source_len, max_target_len) + 2` (a task's max_len): the forms transformer/encoding.py owns
# (most_source_tokens, most_target_tokens, decoder_length, max_len_for).
MARKER_ROOM = re.compile(r"\bmax_len\s*-\s*1\b|\bmax_(?:source|target)_len\)?\s*\+\s*[12]\b")
# A head written as text by hand ("L1H0", f"{layer}.{head}") or parsed back from it: transformer/heads.py's HeadId.
HEAD_TEXT = re.compile(r"""f["']L\{|\}H\{|\{layer\}\.\{head\}|int\(x\) for x in .*\.split\(["']""")
KIND_TEXTS = {"encoder self", "decoder self", "cross"}  # transformer.heads.AttentionKind's values


def kind_literals(source: str) -> list[str]:
    """The string literals of the code (docstrings and comments are other tokens) that are a kind's text."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.STRING:
            try:
                value = ast.literal_eval(token.string)
            except (ValueError, SyntaxError):  # an f-string's pieces
                continue
            if value in KIND_TEXTS:
                found.append(f"{token.start[0]}: {token.string}")
    return found


def restated(source: str) -> list[str]:
    """Every line of code that restates the marker room or a head's text form, and every kind written as text."""
    code = [line.split("#", 1)[0] for line in source.splitlines()]
    return ([line.strip() for line in code if MARKER_ROOM.search(line) or HEAD_TEXT.search(line)]
            + kind_literals(source))


@pytest.mark.parametrize("source, caught", [
    ("limit = cfg.max_len - 1  # room for </s>", True),
    ("limit = model.config.max_len - 1 if max_tokens is None else min(max_tokens, model.config.max_len - 1)", True),
    ('fields.setdefault("max_len", max(TASKS[task].max_source_len, TASKS[task].max_target_len) + 2)', True),
    ("exact = greedy_exact_match(model, tok, pairs, task.max_target_len + 1)", True),
    ("start += max_len + 1 - max_len // 2  # the context window slides", False),
    ("limit = most_target_tokens(cfg)", False),
    ('return f"L{layer}H{head}", float(scores[layer, head])', True),
    ('labels = [f"{layer}.{head}" for layer in range(L) for head in range(H)]', True),
    ('layer, head = (int(x) for x in str(label).split("."))', True),
    ('layer, index = (int(x) for x in head[1:].split("H"))', True),
    ("head = HeadId.parse(label, kind)", False),
    ('own = {k: v for k, v in state.items() if k[len(prefix):].split(".")[0] in LEGACY}', False),
    ('mask = pattern.mask if kind != "encoder self" else None', True),
    ('pattern = record.patterns["cross"]', True),
    ('"""Attention kinds ("encoder self", "decoder self", "cross") are AttentionKind."""', False),
    ("pattern = record.patterns[AttentionKind.CROSS]", False),
])
def test_the_restatement_scanner_sees_each_form(source, caught):
    """Oracle: hand-written lines, each known to restate the marker room, a head's text or a kind's text, or not,
    so the scan below cannot pass vacuously."""
    assert bool(restated(source)) == caught


KIND_AND_HEAD_OWNERS = {"transformer/heads.py", "transformer/encoding.py"}


def test_markers_kinds_and_heads_each_have_one_owner():
    """Invariant: outside transformer/encoding.py (the marker room) and transformer/heads.py (AttentionKind,
    HeadId), no module of the library or the app writes the marker room, a head's text form or a kind's text."""
    packages = ("transformer", *APP_ROOMS)
    files = [p for package in packages for p in sorted((ROOT / package).rglob("*.py"))]
    files += [ROOT / name for name in APP_FILES]
    assert len(files) > 60
    found = {p.relative_to(ROOT).as_posix(): restated(p.read_text(encoding="utf-8")) for p in files}
    assert {name: lines for name, lines in found.items() if lines and name not in KIND_AND_HEAD_OWNERS} == {}
    assert all(restated((ROOT / owner).read_text(encoding="utf-8")) for owner in KIND_AND_HEAD_OWNERS)


def gradio_clients(source: str) -> list[int]:
    """The lines of `source` that make a gradio_client Client themselves (`Client(...)`, `gradio_client.Client(...)`;
    httpx.Client is another thing)."""
    return [node.lineno for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id == "Client") or (
            isinstance(node.func, ast.Attribute) and node.func.attr == "Client"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "gradio_client"))]


def test_the_client_scanner_sees_each_form():
    """Oracle: hand-written lines, each known to make a gradio_client Client or not."""
    assert gradio_clients("c = Client(url, verbose=False)") == [1]
    assert gradio_clients("c = gradio_client.Client(url)") == [1]
    assert gradio_clients("with httpx.Client(timeout=60) as http: pass") == []
    assert gradio_clients("c = api_client(url)") == []


def test_every_gradio_client_of_the_tests_is_made_by_api_client():
    """Invariant: the tests' gradio_client Clients are made by tests/app_server.py's api_client alone, which waits
    HTTP_TIMEOUT_S for each HTTP answer. A Client made elsewhere kept httpx's 5 s, and on a loaded CI machine the app
    of the test's own process has answered later (httpx.ReadTimeout before any assertion). Failed before: 16 files
    of tests/app and tests/reliability made their own."""
    files = sorted((ROOT / "tests").rglob("*.py"))
    found = {p.relative_to(ROOT).as_posix(): gradio_clients(p.read_text(encoding="utf-8")) for p in files}
    assert len(found.pop("tests/app_server.py")) == 1  # api_client's own
    assert {name: lines for name, lines in found.items() if lines} == {}


TEXT_OWNER = "visualize/text.py"
HAND_ESCAPE = re.compile(r"\bhtml\.escape\(|\bescape\(\s*str\(|markdown\.escape|escape_markdown")


def code_lines_matching(pattern: re.Pattern, source: str) -> list[str]:
    """The code lines of `source` (comments left out) where `pattern` is found."""
    return [line.strip() for line in source.splitlines() if pattern.search(line.split("#", 1)[0])]


def found_outside(owner: str, scan, packages=APP_ROOMS) -> dict[str, list[str]]:
    """What `scan` finds in each module of `packages` and the app's top-level files, but `owner`'s."""
    files = [p for package in packages for p in sorted((ROOT / package).rglob("*.py"))]
    files += [ROOT / name for name in APP_FILES]
    found = {p.relative_to(ROOT).as_posix(): scan(p.read_text(encoding="utf-8")) for p in files}
    return {name: lines for name, lines in found.items() if lines and name != owner}


def hand_escapes(source: str) -> list[str]:
    """The code lines (comments left out) that escape text for HTML or Markdown by hand."""
    return code_lines_matching(HAND_ESCAPE, source)


def test_the_escape_scanner_sees_each_form():
    """Oracle: hand-written lines, each known to escape by hand or to call the owner."""
    assert hand_escapes("labels = [html.escape(str(t), quote=False) for t in tokens]")
    assert hand_escapes("def escape(text):\n    return escape(str(text))")
    assert hand_escapes("note = html_text(token)  # not html.escape(token)") == []
    assert hand_escapes("note = markdown_text(sentence)") == []


def test_text_from_outside_is_made_safe_by_one_owner():
    """Invariant (issue 37): text from a user, a link or a file is made safe for the page in visualize/text.py alone
    (html_text for HTML, SVG, plotly labels; markdown_text for a gr.Markdown); no other module of the app or of
    visualize escapes by hand. Failed before: visualize/style.py, patching.py, model.py and line_chart.py each
    escaped in their own way (three of them left quotes, `$` and braces as they were)."""
    assert found_outside(TEXT_OWNER, hand_escapes, ("visualize", *APP_ROOMS)) == {}


SECTION_GATE = re.compile(r"\bonly_open\s*=|\.expand\s*,")  # a section's listener wired by hand: gated, or on expand
SECTION_OWNER = "widgets/ui.py"  # when_open: on the section's opening and its triggers, only while it is open


@pytest.mark.parametrize("line, caught", [
    ('separately(section.expand, record.change, only_open="att-lens-section")(', True),
    ('               other.submit, only_open="att-patch-section")(', True),
    ("when_open(section, record.change)(draw, inputs)  # not section.expand, x", False),
    ("section.expand(lambda: True, None, state)", False),  # open_states marks it open
])
def test_the_section_scanner_sees_each_form(line, caught):
    """Oracle: hand-written lines, each known to wire a section's listener by hand or through the owner."""
    assert bool(code_lines_matching(SECTION_GATE, line)) == caught


def test_a_sections_listeners_are_wired_by_one_owner():
    """Invariant (issue 41 item 5): a listener of a closed-by-default section (an accordion) is called at its opening
    and on its triggers only while it is open, wired by widgets.ui.when_open alone. Failed before: lens.py,
    patching.py, inside.py, two_inputs.py and positional.py each wrote `separately(section.expand, ...,
    only_open="<its elem_id>")`, the elem_id written a second time beside the accordion's own."""
    assert found_outside(SECTION_OWNER, functools.partial(code_lines_matching, SECTION_GATE)) == {}


POINT_OWNER = "transformer/points.py"  # point_name: the one place a named point's name is written
POINT_LEAF = r"(?:(?:resid_(?:pre|mid|cross|post)|ffn\.out|(?:self_attn|cross_attn|\{\})\.(?:[qkv]_input|[qkvz]|pattern|out)))(?!\w)"
POINT_TEXT = re.compile(rf"(?:encoder|decoder|\{{\}})\.(?:\d+|\{{\}})\.{POINT_LEAF}")


def _string_texts(source: str) -> list[str]:
    """Every string literal and f-string of the code (an f-string's replacement fields as "{}"), docstrings left
    out (they document the names)."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    inner = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            texts.append("".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings | inner:
            texts.append(node.value)
    return texts


def hand_point_names(source: str) -> list[str]:
    """The strings of the code that write a named point's name by hand ("decoder.1.resid_post",
    f"{stack}.{i}.self_attn.z") instead of calling transformer.points.point_name or AttentionKind.point."""
    return [text for text in _string_texts(source) if POINT_TEXT.search(text)]


@pytest.mark.parametrize("source, caught", [
    ('names = [f"{stack}.{i}.resid_pre" for i in layers]', True),
    ('pattern = f"decoder.{L}.cross_attn.pattern"', True),
    ('read = ["decoder.0.resid_post", "final"]', True),
    ('z = f"{kind.stack}.{layer}.{kind.module}.z"', True),
    ('ffn = f"encoder.{i}.ffn.out"', True),
    ('ffn = point_name(stack, i, "ffn.out")', False),
    ('z = AttentionKind.CROSS.point(L, "pattern")', False),
    ('w = state[f"decoder.{i}.self_attn.out_proj.weight"]', False),  # a parameter's name, not a point's
    ('def f():\n    """Reads {stack}.{i}.resid_pre."""\n    return 1', False),  # a docstring documents a name
])
def test_the_point_name_scanner_sees_each_form(source, caught):
    """Oracle: hand-written code, each known to write a point's name by hand or to call its owner."""
    assert bool(hand_point_names(source)) == caught


def test_every_point_name_is_written_by_one_owner():
    """Invariant (issue 41, item 2): a named point's name is written in transformer/points.py (point_name) alone;
    the library, visualize, the app and bench call it (or AttentionKind.point, which calls it). Failed before:
    bench/feature_demo_search.py wrote a cross-attention pattern's name, bench/points_overhead.py a residual's."""
    found = found_outside(POINT_OWNER, hand_point_names, packages=("transformer", "visualize", "bench") + APP_ROOMS)
    assert found == {}
    assert "{}.{}.{}" in _string_texts((ROOT / POINT_OWNER).read_text(encoding="utf-8"))  # the owner's is seen


ARCH_QUESTION = re.compile(r"\bis_encoder_decoder\b")
# Who asks whether a model is encoder-decoder: the owners of a run's inputs (encoding), of the kinds a model has
# (heads) and of what forward reads (model); and the few decisions that are about the arch itself, each counted.
ARCH_OWNERS = {"transformer/config.py", "transformer/encoding.py", "transformer/heads.py", "transformer/model.py"}
ARCH_DECISIONS = {"transformer/interpretability/probe.py": 3,  # a step's decoder input; a record's target, or none
                  "transformer/interpretability/patching_runs.py": 2,  # a pair's targets: needed or refused
                  "transformer/interpretability/ablation.py": 1,  # the loss's examples: a task's pairs or the text
                  "transformer/train/run.py": 1,  # a language model trains a decoder-only model
                  "tabs/attention/inside.py": 1,  # how long a continuation with heads off runs
                  "transformer/pretrained/marian.py": 1}  # config.json's own field, not ours


def test_few_places_ask_whether_a_model_is_encoder_decoder():
    """Invariant (issue 41, item 4): `is_encoder_decoder` is asked by its owners (a run's inputs: encoding.run_ids,
    decoder_batch; the kinds: AttentionKind.of; forward's arguments) and by the counted decisions above; everything
    else asks those owners. Failed on main 8c8caba (24 sites in 14 files): probe.py 6, generate.py 3, analysis.py,
    logit_lens.py, aer.py, tabs/model.py and tabs/attention/patching.py 1 each over their count."""
    found = {name: len(lines) for name, lines in found_outside(
        "", lambda source: code_lines_matching(ARCH_QUESTION, source),
        packages=("transformer", "visualize") + APP_ROOMS).items() if name not in ARCH_OWNERS}
    assert {name: n for name, n in found.items() if n > ARCH_DECISIONS.get(name, 0)} == {}
