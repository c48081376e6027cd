"""The package's layers import one way (docs/architecture.md, "Layers").

Parsed from the source with `ast`, so a new import that breaks a rule fails here:

    target/                 the project's nothing
    layout.py               target
    dialects/               layout, target (and each other)
    analysis/, transforms/, lowering/, pipeline.py, diagnostics.py
                            dialects, analysis, layout, target, diagnostics, gc_pause; a pass file
                            imports no other pass file (transforms and lowering apart); pipeline.py
                            may import every pass
    sim/                    dialects, layout, target, gc_pause (the device model: never a pass,
                            analysis, the host runtime or the front end)
    runtime/                sim, dialects, layout, target, gc_pause (the host executor)
    reference/              runtime, sim, dialects, layout, target, frontend
    frontend/               everything but tools/ and testing/
    tools/, passes.py, demo.py, testing/, the package root: anything

No import cycle among the package's modules (imports under `if TYPE_CHECKING:` count: a circle
they close is a circle of the design, hidden from the interpreter only), and no private name (`_x`)
taken from another module of the package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "spyre_mlir"

COMPILER = {"analysis", "transforms", "lowering", "pipeline", "diagnostics"}
ALLOWED: dict[str, set[str]] = {
    "target": {"target"},
    "layout": {"target"},
    "gc_pause": set(),
    "dialects": {"dialects", "layout", "target"},
    "analysis": {"dialects", "analysis", "layout", "target", "diagnostics"},
    "transforms": {"dialects", "analysis", "layout", "target", "diagnostics", "gc_pause"},
    "lowering": {"dialects", "analysis", "layout", "target", "diagnostics", "gc_pause"},
    "diagnostics": {"dialects", "layout", "target"},
    "pipeline": {"dialects", "analysis", "transforms", "lowering", "layout", "target", "diagnostics", "gc_pause"},
    "sim": {"sim", "dialects", "layout", "target", "gc_pause"},
    "runtime": {"runtime", "sim", "dialects", "layout", "target", "gc_pause"},
    "reference": {"reference", "runtime", "sim", "dialects", "layout", "target", "frontend", "gc_pause"},
}
"""Layer -> the layers it may import. Layers not listed (frontend, tools, passes, demo, testing, the
package root) are checked only for cycles and private names, and frontend never imports tools or testing."""


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


class Source:
    """One module's imports of the package (imported module, line), those under `if
    TYPE_CHECKING:` too, the private names it takes, and the project modules it binds to a
    local name."""

    def __init__(self, path: Path, modules: set[str]):
        self.path, self.name = path, module_name(path)
        tree = ast.parse(path.read_text(), str(path))
        package = self.name if path.name == "__init__.py" else self.name.rpartition(".")[0]
        self.imports: list[tuple[str, int]] = []
        self.private: list[tuple[str, int]] = []
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("spyre_mlir"):
                        self.imports.append((a.name, node.lineno))
                        if a.asname:
                            aliases[a.asname] = a.name
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(
                        package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                    )
                if not base.startswith("spyre_mlir"):
                    continue
                for a in node.names:
                    full = f"{base}.{a.name}"
                    if full in modules:  # `from pkg import module`
                        self.imports.append((full, node.lineno))
                        aliases[a.asname or a.name] = full
                    else:
                        self.imports.append((base, node.lineno))
                        if a.name.startswith("_") and not a.name.startswith("__"):
                            self.private.append((f"{base}.{a.name}", node.lineno))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                self.private.append((f"{aliases[node.value.id]}.{node.attr}", node.lineno))


def load_sources() -> dict[str, Source]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {s.name: s for s in (Source(p, modules) for p in paths)}


def resolve(imported: str, sources: dict[str, Source]) -> str:
    """The package module an import names (a name inside a module resolves to the module)."""
    while imported and imported not in sources:
        imported = imported.rpartition(".")[0]
    return imported


def layer_violations(sources: dict[str, Source]) -> list[str]:
    found = []
    for src in sources.values():
        here = layer(src.name)
        for imported, line in src.imports:
            there = layer(resolve(imported, sources))
            if here == "frontend" and there in ("tools", "testing"):
                found.append(f"{src.name}:{line} imports {imported}: the front end never imports {there}/")
            allowed = ALLOWED.get(here)
            if allowed is None or there == "" or there == here and here not in ("transforms", "lowering"):
                continue
            if here in ("transforms", "lowering") and there in ("transforms", "lowering"):
                if not _same_pass(src.name, resolve(imported, sources)):
                    found.append(f"{src.name}:{line} imports {imported}: one pass's file imports another pass")
            elif there not in allowed:
                found.append(f"{src.name}:{line} imports {imported}: {here} may import only {sorted(allowed)}")
    return found


def _same_pass(a: str, b: str) -> bool:
    """Modules of one pass: a pass file, or the modules of one pass package (lowering/x/...)."""
    pa, pb = a.split("."), b.split(".")
    return len(pa) >= 3 and len(pb) >= 3 and pa[:3] == pb[:3] or a.count(".") == 1 or b.count(".") == 1


def private_violations(sources: dict[str, Source]) -> list[str]:
    found = []
    for src in sources.values():
        for name, line in src.private:
            owner = resolve(name.rpartition(".")[0], sources)
            if owner != src.name:
                found.append(f"{src.name}:{line} takes the private {name}")
    return found


def cycles(sources: dict[str, Source]) -> list[list[str]]:
    graph = {name: sorted({resolve(m, sources) for m, _ in src.imports} - {name, ""}) for name, src in sources.items()}
    found: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, []):
            if _is_parent(nxt, node):
                continue  # importing a submodule imports its package first: not a cycle of ours
            if state.get(nxt) == 1:
                found.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for name in graph:
        if name not in state:
            visit(name)
    return found


def _is_parent(package: str, module: str) -> bool:
    return module.startswith(package + ".")


@pytest.fixture(scope="module")
def sources() -> dict[str, Source]:
    return load_sources()


def test_layers_import_one_way(sources):
    assert layer_violations(sources) == []


def test_no_private_name_crosses_modules(sources):
    assert private_violations(sources) == []


def test_no_import_cycle(sources):
    assert cycles(sources) == []


def test_the_checks_see_a_bad_import(tmp_path):
    """The checks themselves: a runtime module importing a pass, a dialect importing analysis, a
    private name, a cycle and a cycle closed only by a `TYPE_CHECKING` import are each found."""
    root = tmp_path / "spyre_mlir"
    for d in ("runtime", "dialects", "analysis", "transforms"):
        (root / d).mkdir(parents=True)
        (root / d / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "runtime" / "a.py").write_text("from spyre_mlir.transforms.p import X\n")
    (root / "transforms" / "p.py").write_text("X = 1\n")
    (root / "dialects" / "d.py").write_text("from spyre_mlir.analysis import w\n")
    (root / "analysis" / "w.py").write_text("from spyre_mlir.dialects.d import _hidden\n")
    (root / "transforms" / "q.py").write_text("from spyre_mlir.transforms.r import lower\n")
    (root / "transforms" / "r.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from spyre_mlir.transforms.q import Gen\n"
    )
    global PACKAGE
    saved, PACKAGE = PACKAGE, root
    try:
        found = load_sources()
        layers = layer_violations(found)
        assert any("spyre_mlir.runtime.a" in v and "transforms" in v for v in layers), layers
        assert any("spyre_mlir.dialects.d" in v for v in layers), layers
        assert any("_hidden" in v for v in private_violations(found))
        circles = cycles(found)
        assert any("spyre_mlir.dialects.d" in c and "spyre_mlir.analysis.w" in c for c in circles), circles
        assert any("spyre_mlir.transforms.q" in c and "spyre_mlir.transforms.r" in c for c in circles), circles
    finally:
        PACKAGE = saved
