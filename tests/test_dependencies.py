"""The direction of dependency (DESIGN.md): transformer <- visualize <- app.py; nothing imports upward.

Checked by parsing the source with `ast` (no module is imported), so a violation is caught even in code that
never runs in the tests (a function body, a branch).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(source: str) -> set[str]:
    """Top-level names of every module the source imports: import x.y, from x import y, from .. import x,
    importlib.import_module("x") and __import__("x")."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
            elif node.level >= 2:  # from ..x import y / from .. import x: a sibling of the package
                names |= {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and \
                isinstance(node.args[0].value, str):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in ("import_module", "__import__"):
                names.add(node.args[0].value.split(".")[0])
    return names


def violations(package: str, forbidden: set[str]) -> list[str]:
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        bad = imported_modules(path.read_text(encoding="utf-8")) & forbidden
        found += [f"{path.relative_to(ROOT)} imports {name}" for name in sorted(bad)]
    return found


@pytest.mark.parametrize("source, expected", [
    ("import plotly.graph_objects as go", {"plotly"}),
    ("def f():\n    import gradio as gr", {"gradio"}),
    ("from visualize.attention import heatmap", {"visualize"}),
    ("from ..visualize import attention", {"visualize"}),
    ("from .. import visualize", {"visualize"}),
    ("import importlib\nimportlib.import_module('plotly.express')", {"importlib", "plotly"}),
    ("from .model import Transformer\nimport torch", {"torch"}),
])
def test_the_checker_finds_imports(source, expected):
    """Oracle: hand-written snippets with known imports, so the dependency tests below cannot pass vacuously."""
    assert imported_modules(source) == expected


def test_transformer_does_not_import_plotly_gradio_or_visualize():
    """Invariant: the model library depends on torch only: no module in transformer/ imports plotly, gradio or
    visualize."""
    assert len(list((ROOT / "transformer").glob("*.py"))) >= 10  # the package is really there
    assert violations("transformer", {"plotly", "gradio", "visualize"}) == []


def test_visualize_does_not_import_gradio():
    """Invariant: figure builders take plain data and return figures; visualize/ never imports gradio (or app)."""
    if not (ROOT / "visualize").is_dir():
        return  # nothing to check yet: no visualize package
    assert violations("visualize", {"gradio", "app"}) == []


def test_the_app_and_library_never_import_transformers():
    """Invariant: `transformers` is a dev/test dependency only (the oracle for transformer/pretrained/ and the peer
    in bench/versus_hf.py): no module of transformer/, tabs/ or visualize/, and not app.py, imports it."""
    found = [v for package in ("transformer", "visualize", "server", "store", "tabs", "widgets") if (ROOT / package).is_dir()
             for v in violations(package, {"transformers"})]
    if "transformers" in imported_modules((ROOT / "app.py").read_text(encoding="utf-8")):
        found.append("app.py imports transformers")
    assert found == []
    assert "transformers" in imported_modules("from transformers import GPT2LMHeadModel")  # the checker sees it


# The app's rooms (docs/architecture.md, "What is where"): the first part of a module's dotted name.
APP = ("app", "checks", "limits", "server", "store", "tabs", "widgets")
ROOM_RULES = {  # room -> the modules it never imports (its own job is in docs/architecture.md)
    "limits": set(APP) | {"transformer", "visualize", "gradio"},  # a leaf: nothing of the app
    "checks": {"app", "server", "store", "tabs", "widgets", "gradio"},  # plain checks, used by every room
    "store": {"app", "server", "tabs", "widgets", "gradio"},  # what the server keeps: no page, no protection
    "widgets": {"app", "server", "store", "tabs"},
    "server": {"app", "tabs"},
    "tabs": {"app", "server"},
}


def app_modules() -> dict[str, Path]:
    """Dotted name -> file of every module of the app (app.py, the top-level modules and the room packages)."""
    files = [ROOT / f"{name}.py" for name in APP if (ROOT / f"{name}.py").is_file()]
    files += [p for name in APP if (ROOT / name).is_dir() for p in sorted((ROOT / name).rglob("*.py"))]
    modules = {}
    for path in files:
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def dotted_imports(source: str, module: str, is_package: bool = False) -> set[str]:
    """Dotted names of the modules `module`'s source imports, anywhere in it (a function body too), relative imports
    resolved against it; `from x import y` names both x and x.y (y may be a module), importlib.import_module too."""
    here = module.split(".") if is_package else module.split(".")[:-1]
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            name = ".".join(base + (node.module.split(".") if node.module else []))
            names |= {name} | {f"{name}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and \
                isinstance(node.args[0].value, str):
            func = node.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) in \
                    ("import_module", "__import__"):
                names.add(node.args[0].value)
    return {name for name in names if name}


def room_breaks(sources: dict[str, str]) -> list[str]:
    """Each import of a module (dotted name -> source) that its room's rule forbids."""
    found = []
    for module, source in sorted(sources.items()):
        forbidden = ROOM_RULES.get(module.split(".")[0], set())
        found += [f"{module} imports {name}" for name in sorted(dotted_imports(source, module))
                  if name.split(".")[0] in forbidden]
    return found


@pytest.mark.parametrize("module, source, expected", [
    ("store.catalogue", "from checks import UserError\nfrom limits import STORED_MODELS", []),
    ("store.catalogue", "import gradio as gr", ["store.catalogue imports gradio"]),
    ("store.user_models", "def f():\n    from tabs.train import page", ["store.user_models imports tabs.train",
                                                                     "store.user_models imports tabs.train.page"]),
    ("tabs.train.page", "from store.clients import client_address", []),
    ("tabs.train.page", "from ...server.admission import client_address",
     ["tabs.train.page imports server.admission", "tabs.train.page imports server.admission.client_address"]),
    ("tabs.generate", "import importlib\nimportlib.import_module('server.guard')", ["tabs.generate imports server.guard"]),
    ("server.guard", "from tabs import demos", ["server.guard imports tabs", "server.guard imports tabs.demos"]),
    ("limits", "from __future__ import annotations", []),
    ("limits", "from checks import MAX_PROMPT_CHARS", ["limits imports checks", "limits imports checks.MAX_PROMPT_CHARS"]),
    ("widgets.ui", "from store import sessions", ["widgets.ui imports store", "widgets.ui imports store.sessions"]),
])
def test_the_room_checker_finds_each_break(module, source, expected):
    """Oracle: hand-written imports of a module, each known to break its room's rule or not (relative ones
    resolved against the module, imports inside a function and importlib's seen), so the test below cannot pass
    vacuously."""
    assert room_breaks({module: source}) == expected


def test_the_rooms_import_only_what_their_rule_allows():
    """Invariant (docs/architecture.md, "What is where"): server/ and tabs/ never import each other; store/ imports neither, nor
    widgets/ or gradio; limits imports nothing of the app; no room imports app.py."""
    modules = app_modules()
    assert {"limits", "server.admission", "store.catalogue", "widgets.controls", "tabs.train.page"} <= set(modules)
    sources = {name: path.read_text(encoding="utf-8") for name, path in modules.items()}
    assert room_breaks(sources) == []


def app_import_graph() -> dict[str, set[str]]:
    """Module -> the modules of the app it imports (from x import y counts x.y when y is a module of the app)."""
    modules = app_modules()
    return {name: {m for m in dotted_imports(path.read_text(encoding="utf-8"), name, path.name == "__init__.py")
                   if m in modules and m != name}
            for name, path in modules.items()}


def test_the_app_has_no_import_circle():
    """Invariant: the app's modules import each other without a circle, between rooms and inside tabs/ (the
    Attention tab's page and its two-inputs section imported each other, one of them inside a function, until
    tabs.attention.record took the record both need). The cycle finder is tests/test_one_owner.py's, with its
    oracle there."""
    from tests.test_one_owner import cycles

    graph = app_import_graph()
    assert "tabs.attention.record" in graph["tabs.attention.two_inputs"]  # the graph sees the imports
    assert cycles(graph) == []
    rooms = {}
    for module, deps in graph.items():
        rooms.setdefault(module.split(".")[0], set()).update(d.split(".")[0] for d in deps)
    assert cycles({room: deps - {room} for room, deps in rooms.items()}) == []
    graph["tabs.attention.two_inputs"].add("tabs.attention.page")  # the circle there was, put back: it is found
    assert cycles(graph)
