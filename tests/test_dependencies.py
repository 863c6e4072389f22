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
    found = [v for package in ("transformer", "tabs", "visualize") if (ROOT / package).is_dir()
             for v in violations(package, {"transformers"})]
    if "transformers" in imported_modules((ROOT / "app.py").read_text(encoding="utf-8")):
        found.append("app.py imports transformers")
    assert found == []
    assert "transformers" in imported_modules("from transformers import GPT2LMHeadModel")  # the checker sees it
