"""The package's layers import in one direction: no module cycles between the core and
the adapters, nor between the live refits and their worker process."""

from __future__ import annotations

import ast
import pathlib

import pytest

import hpinsight

ROOT = pathlib.Path(hpinsight.__file__).parent


def runtime_imports(path: pathlib.Path) -> set[str]:
    """Modules ``path`` imports when it runs (anywhere but under ``if TYPE_CHECKING:``),
    as dotted names relative to the package (``_space``, ``adapters._optuna``)."""
    tree = ast.parse(path.read_text())
    package = path.relative_to(ROOT).parent.parts
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(package[: len(package) - (node.level - 1)])
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            found.add(module)
            for alias in node.names:  # "from . import x" imports a module x
                found.add(f"{module}.{alias.name}".lstrip("."))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


@pytest.mark.parametrize("path", sorted((ROOT / "adapters").glob("*.py")), ids=lambda p: p.name)
def test_adapters_never_import_the_space_or_the_history(path: pathlib.Path) -> None:
    # the core's doors (SearchSpace.from_optuna, TrialHistory.from_smac, ...) import the
    # adapters; the adapters build spaces through the class they are given
    assert not runtime_imports(path) & {"_space", "_history"}


def test_the_worker_does_not_import_the_live_refits() -> None:
    assert "integrations._live" not in runtime_imports(ROOT / "integrations" / "_worker.py")


def test_the_parameter_types_import_nothing_of_the_package_but_errors() -> None:
    assert {m.split(".")[0] for m in runtime_imports(ROOT / "_params.py")} == {"exceptions"}


def test_the_finder_sees_imports_inside_functions() -> None:
    # guard for the tests above: the lazy doors in _space are found
    assert "adapters._optuna" in runtime_imports(ROOT / "_space.py")
