"""The package's layers import in one direction. Read from the source (imports inside
functions included, those under ``if TYPE_CHECKING:`` too, since a type is a dependency),
the modules form no import circle but one: a result's ``.plot()`` method imports the
plotting layer, which reads the result back. That door is the one allowed exception."""

from __future__ import annotations

import ast
import pathlib

import pytest

import hpinsight

ROOT = pathlib.Path(hpinsight.__file__).parent
MODULES = sorted(ROOT.rglob("*.py"))
#: The layers that compute: they never import plotting, except through the door.
COMPUTATION = ("space", "surrogates", "adapters", "_history", "_fanova", "_fanova_result",
               "_pdp", "_regions", "_regions_result", "_risk", "_defaults", "_subspace",
               "_surrogate_risk", "_decisions", "_decision_result", "_pareto", "experiments",
               "_across", "_execution")
#: The one door from computation to plotting: a method of this name.
DOOR = "plot"


def name_of(path: pathlib.Path) -> str:
    """``space._encoding`` for ``space/_encoding.py``; ``space`` for ``space/__init__.py``."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


KNOWN = {name_of(p) for p in MODULES}


def imports(path: pathlib.Path) -> list[tuple[str, str | None]]:
    """Every module of the package ``path`` imports, with the name of the function the
    import sits in (None at module level)."""
    tree = ast.parse(path.read_text())
    package = path.relative_to(ROOT).parent.parts
    found: list[tuple[str, str | None]] = []

    def visit(node: ast.AST, func: str | None) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            func = node.name
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(package[: len(package) - (node.level - 1)])
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            for alias in node.names:  # "from . import x" imports a module x
                sub = f"{module}.{alias.name}".lstrip(".")
                found.append((sub if sub in KNOWN else module, func))
        for child in ast.iter_child_nodes(node):
            visit(child, func)

    visit(tree, None)
    return [(m, f) for m, f in found if m in KNOWN]


GRAPH = {name_of(p): imports(p) for p in MODULES}


def layer(module: str) -> str:
    return module.split(".")[0]


def circles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(group)

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


def _edges(*, door: bool) -> dict[str, set[str]]:
    return {m: {t for t, func in found if t != m and (door or not (
        func == DOOR and layer(t) == "plotting"))} for m, found in GRAPH.items()}


def test_no_import_circle_but_the_plot_door() -> None:
    assert circles(_edges(door=False)) == []
    # and the door is real: with it, the results and plotting form the one circle
    with_door = circles(_edges(door=True))
    assert len(with_door) == 1
    assert {layer(m) for m in with_door[0]} >= {"plotting", "_fanova_result"}


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if layer(m) in COMPUTATION))
def test_computation_imports_plotting_only_in_a_plot_method(module: str) -> None:
    for target, func in GRAPH[module]:
        if layer(target) == "plotting":
            assert func == DOOR, f"{module} imports {target} in {func!r}"


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if layer(m) in ("space", "_history")))
def test_the_core_types_know_no_optimizer(module: str) -> None:
    # optimizer data comes in through the adapters, which sit above the space and history
    assert not {t for t, _ in GRAPH[module]} & {m for m in KNOWN if layer(m) in (
        "adapters", "integrations", "surrogates")}


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if layer(m) == "adapters"))
def test_adapters_bring_data_in_and_use_no_analysis(module: str) -> None:
    used = {layer(t) for t, _ in GRAPH[module]}
    assert not used & {"_fanova", "_pdp", "_regions", "_risk", "_defaults", "_subspace",
                       "_decisions", "integrations", "plotting", "_reporting", "cli"}


def test_the_parameter_types_import_nothing_of_the_package_but_errors() -> None:
    assert {t for t, _ in GRAPH["space._params"]} == {"exceptions"}


def test_the_encoding_reads_a_space_without_importing_it() -> None:
    assert "space._space" not in {t for t, _ in GRAPH["space._encoding"]}


def test_the_worker_does_not_import_the_live_refits() -> None:
    assert "integrations._live" not in {t for t, _ in GRAPH["integrations._worker"]}


def test_the_finder_sees_imports_inside_functions_and_names_them() -> None:
    # guard for the tests above: the lazy door of a result is found, inside plot()
    assert ("plotting", "plot") in GRAPH["_fanova_result"]
    assert ("adapters", None) in GRAPH["_fanova"]
