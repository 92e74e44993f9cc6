"""The package's shape, checked from its source: no import cycle between git_ckpt modules (late
imports inside functions count too, so none can hide a cycle), and pygit2 behind gitcore."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "git_ckpt"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()
_TREES: dict[Path, ast.Module] = {}


def _parse(path: Path) -> ast.Module:
    """The syntax tree of ``path``, parsed once per run."""
    if path not in _TREES:
        _TREES[path] = ast.parse(path.read_text(), str(path))
    return _TREES[path]


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The git_ckpt modules an import statement in ``module`` loads."""
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in MODULES]
    if node.level:
        base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
        origin = ".".join(base + ([node.module] if node.module else []))
    else:
        origin = node.module or ""
    out = []
    for alias in node.names:
        if f"{origin}.{alias.name}" in MODULES:
            out.append(f"{origin}.{alias.name}")
        elif origin in MODULES:
            out.append(origin)
    return out


def import_graph() -> dict[str, dict[str, int]]:
    """module → {imported git_ckpt module: line}, every import at any depth except those under
    ``if TYPE_CHECKING:`` (never executed)."""
    graph: dict[str, dict[str, int]] = {}
    for module, path in MODULES.items():
        edges: dict[str, int] = {}

        class Visitor(ast.NodeVisitor):
            def visit_If(self, node: ast.If) -> None:
                if "TYPE_CHECKING" in ast.unparse(node.test):
                    for child in node.orelse:
                        self.visit(child)
                    return
                self.generic_visit(node)

            def visit_Import(self, node: ast.Import | ast.ImportFrom, module: str = module,
                             edges: dict[str, int] = edges) -> None:
                for target in _targets(module, node):
                    if target != module:
                        edges.setdefault(target, node.lineno)

            visit_ImportFrom = visit_Import

        Visitor().visit(_parse(path))
        graph[module] = edges
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    described = [
        " / ".join(f"{m} imports {t} (line {graph[m][t]})" for m in comp for t in graph[m] if t in comp)
        for comp in cycles(graph)
    ]
    assert described == []


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b": 1}, "b": {"a": 3}}, [["a", "b"]]),
    ({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}, [["a", "b", "c"]]),
    ({"a": {"b": 1}, "b": {}, "c": {"b": 1}}, []),
])
def test_the_cycle_finder_finds_cycles(graph, expected):
    assert cycles(graph) == expected


def test_a_late_import_counts_and_type_checking_does_not(tmp_path, monkeypatch):
    """A function-level import is an edge (it would hide a cycle otherwise); an import under
    ``if TYPE_CHECKING:`` is not."""
    src = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .store import Checkpoint\n" \
          "def f():\n    from . import verify\n"
    fake = tmp_path / "git_ckpt" / "probe.py"
    fake.parent.mkdir()
    fake.write_text(src)
    monkeypatch.setitem(MODULES, "git_ckpt.probe", fake)
    assert import_graph()["git_ckpt.probe"] == {"git_ckpt.verify": 5}


def test_evidence_sits_below_verify_promote_and_the_gate():
    graph = import_graph()
    below = {"git_ckpt.verify", "git_ckpt.promote", "git_ckpt.gate", "git_ckpt.gatecache"}
    reach, todo = set(), ["git_ckpt.evidence"]
    while todo:
        for t in graph[todo.pop()]:
            if t not in reach:
                reach.add(t)
                todo.append(t)
    assert reach & below == set()
    for m in below:
        assert "git_ckpt.evidence" in graph[m] or m == "git_ckpt.gatecache"


def _calls(attr: str) -> list[str]:
    """``module:line`` of every call of a method named ``attr`` outside gitcore.py."""
    out = []
    for module, path in MODULES.items():
        if module == "git_ckpt.gitcore":
            continue
        for node in ast.walk(_parse(path)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == attr:
                out.append(f"{module}:{node.lineno}")
    return out


@pytest.mark.parametrize("attr", ["update_ref", "transaction", "set_target", "create_reference"])
def test_every_ref_write_goes_through_the_one_retry_primitive(attr):
    """Only :meth:`Repo.swap` (in gitcore) writes refs; nobody else calls the single
    compare-and-swap or pygit2's ref writers."""
    assert _calls(attr) == []


def test_only_gitcore_touches_pygit2():
    """``Repo`` is the only holder of pygit2 objects: no other module imports pygit2 or reaches
    for the repository's private pygit2 handle."""
    imports, handles = [], []
    for module, path in MODULES.items():
        if module == "git_ckpt.gitcore":
            continue
        for node in ast.walk(_parse(path)):
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "pygit2" for a in node.names):
                imports.append(f"{module}:{node.lineno}")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pygit2":
                imports.append(f"{module}:{node.lineno}")
            elif isinstance(node, ast.Attribute) and node.attr in ("pg", "_pg"):
                handles.append(f"{module}:{node.lineno}")
    assert (imports, handles) == ([], [])


def test_no_module_shadows_the_standard_library():
    """``git_ckpt/inspect.py`` once shadowed ``inspect`` (and ``secrets.py`` ``secrets``) for any
    code run from inside the package directory; no module may take a standard-library name."""
    import sys

    names = {m.rpartition(".")[2] for m in MODULES if m != "git_ckpt"}
    assert sorted(names & set(sys.stdlib_module_names)) == []


@pytest.mark.parametrize("attr", ["to_builtins", "encode"])
def test_only_model_serialises_with_msgspec(attr):
    """Object ids are :class:`git_ckpt.gitcore.Oid` (a ``str`` subclass msgspec refuses without
    a hook): JSON goes through model.py's encoder and ``to_builtins``, which have it."""
    found = []
    for module, path in MODULES.items():
        if module == "git_ckpt.model":
            continue
        for node in ast.walk(_parse(path)):
            if isinstance(node, ast.Attribute) and node.attr == attr and "msgspec" in ast.unparse(node.value):
                found.append(f"{module}:{node.lineno}")
    assert found == []


def test_no_import_of_our_own_modules_is_guarded():
    """A ``try: from . import X / except ImportError`` guard hides a broken module as a missing
    feature; every git_ckpt module always ships, so none is guarded."""
    found = []
    for module, path in MODULES.items():
        for node in ast.walk(_parse(path)):
            if not isinstance(node, ast.Try):
                continue
            catches = {ast.unparse(h.type) for h in node.handlers if h.type is not None}
            if not catches & {"ImportError", "ModuleNotFoundError"}:
                continue
            if any(isinstance(n, ast.ImportFrom) and n.level > 0 for stmt in node.body for n in ast.walk(stmt)):
                found.append(f"{module}:{node.lineno}")
    assert found == []
