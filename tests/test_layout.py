"""The layout of ``src/nclab`` as docs/architecture.md draws it: no import cycle between modules nor
between packages, dependencies pointing down the picture, imports of nclab modules inside functions
only at the boundaries that need them, no experiment importing another, and size limits with
stated reasons.

Imports are read from the source (``ast``), including those inside functions; imports under
``if TYPE_CHECKING:`` are left out (they never run).
"""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path
from typing import NamedTuple

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = SRC / "nclab"

#: the layers of docs/architecture.md, lowest first: a module may import modules of its own area
#: or of a lower layer, never of a higher one
LAYERS: list[set[str]] = [
    {"errors", "_version"},
    {
        "config",
        "runs",
        "progress",
        "threads",
        "workers",
        "rng",
        "validation",
        "_kernels",
        "tables",
        "provenance",
        "verdicts",
    },
    {"theory", "distributed"},
    {"stats"},  # the statistics (ClassStatsBase); never the metrics
    {"metrics"},  # pure functions of the statistics; they never build them
    {"collapse"},  # nclab.ClassStats (= ClassStatsBase + compute()), statistics of grouped vectors
    {"probe", "measure", "data", "curvature"},
    {"__init__"},  # `import nclab`: ClassStats, collapse_metrics, CollapseProbe
    {"integrations"},  # Lightning, Hugging Face, torchmetrics (optional extras) over probe/stats
    {"models"},
    {"train"},
    {"report"},  # figure helpers (matplotlib) the experiments draw with; the claim report is
    # nclab.reproduce.reports, above the judging (test_the_claim_report_sits_above_the_judging)
    {"experiments"},
    {"evidence"},  # the ledger of recorded runs (reads run directories and the experiments)
    {"reproduce"},
    {"cli", "__main__"},
]
#: the modules where importing an nclab module inside a function is the design (a pattern ending
#: in ``.*`` also matches the package itself) and why. Anywhere else an nclab import is at module
#: level, where the import graph, its layers and its cycles are plain to see. Function-level imports
#: of third-party packages (torch, scipy, matplotlib, transformers, ray, ...) are not restricted.
FUNCTION_IMPORTS_ALLOWED: dict[str, str] = {
    "nclab": "torch-free `import nclab`: ClassStats, collapse_metrics, CollapseProbe load on first "
    "access (PEP 562)",
    "nclab.cli.*": "the CLI: `nclab --help` imports no torch; each verb imports what it runs",
    "nclab.experiments.catalog": "the experiment catalog: an experiment package is imported by name "
    "on first use",
    "nclab.experiments.protocol": "Lazy / lazy_exports: an experiment's run, figures and other "
    "torch-using exports load on first access",
    "nclab.integrations.*": "optional extras (Lightning, Hugging Face, torchmetrics), imported only "
    "by name",
}
#: what theory may import of nclab (it is numpy/scipy only otherwise)
THEORY_MAY_IMPORT = {"errors", "theory"}
#: a module over this many lines, or a function over FUNCTION_LINES, says why in its docstring
MODULE_LINES, FUNCTION_LINES = 400, 60
REASON = "Length:"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST):
    """(node, inside a function) for every Import / ImportFrom node, skipping the bodies of
    ``if TYPE_CHECKING:``."""
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, in_function = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                stack.extend((c, in_function) for c in child.orelse)
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, in_function
            function = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            stack.append((child, in_function or function))


def _targets(name: str, path: Path, node, modules: dict[str, Path]) -> set[str]:
    """The nclab modules an import statement loads (the most specific module named)."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in modules}
    if node.level:
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{node.module}" if node.module else package
    else:
        base = node.module or ""
    if base not in modules:
        return set()
    out = set()
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        out.add(sub if sub in modules else base)
    return out


class Edge(NamedTuple):
    module: str
    target: str
    in_function: bool


def import_edges() -> list[Edge]:
    """Every import of an nclab module by an nclab module, and whether it is inside a function."""
    modules = _modules()
    edges = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        for node, in_function in _import_nodes(tree):
            for target in _targets(name, path, node, modules):
                if target != name:
                    edges.append(Edge(name, target, in_function))
    return edges


def import_graph() -> dict[str, set[str]]:
    """module -> the nclab modules it imports (at module level or inside functions)."""
    graph: dict[str, set[str]] = {name: set() for name in _modules()}
    for e in import_edges():
        graph[e.module].add(e.target)
    return graph


def package_graph() -> dict[str, set[str]]:
    """area -> the other areas it imports: modules collapsed to their top-level package under
    nclab (``nclab.stats._core`` -> ``stats``; ``nclab`` -> ``__init__``)."""
    graph: dict[str, set[str]] = {}
    for m, deps in import_graph().items():
        graph.setdefault(_area(m), set()).update(_area(d) for d in deps if _area(d) != _area(m))
    return graph


def _matches(pattern: str, module: str) -> bool:
    """fnmatch, and ``package.*`` also matches ``package`` (its ``__init__``)."""
    return fnmatch.fnmatchcase(module, pattern) or (
        pattern.endswith(".*") and module == pattern[:-2]
    )


def _allowed_in_functions(module: str) -> bool:
    return any(_matches(pattern, module) for pattern in FUNCTION_IMPORTS_ALLOWED)


def function_level_imports() -> set[tuple[str, str]]:
    """(module, imported nclab module) for each import inside a function outside the boundaries of
    FUNCTION_IMPORTS_ALLOWED."""
    return {
        (e.module, e.target)
        for e in import_edges()
        if e.in_function and not _allowed_in_functions(e.module)
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _area(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _layer(module: str) -> int:
    area = _area(module)
    for i, layer in enumerate(LAYERS):
        if area in layer:
            return i
    raise AssertionError(f"{module}: area {area!r} is in no layer of LAYERS; add it")


def test_the_import_graph_is_read():
    g = import_graph()
    # known edges, so that a broken reader cannot pass the tests below with an empty graph
    assert "nclab.errors" in g["nclab"] and "nclab.stats._core" in g["nclab.stats"]
    assert "nclab.experiments.catalog" in g["nclab.experiments"]
    assert any(d.startswith("nclab.errors") for d in g["nclab.theory"])


def test_no_import_cycle():
    assert _cycles(import_graph()) == []


def test_no_import_cycle_between_packages():
    """stats and metrics, say, may not import each other even through different modules, nor
    inside a function."""
    assert _cycles(package_graph()) == []


def test_cycle_finder_finds_one():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_package_graph_is_read():
    g = package_graph()
    assert {"stats", "metrics"} <= g["collapse"] and "collapse" in g["probe"]
    assert "metrics" not in g["stats"] and "experiments" in g["cli"]  # the CLI's, in functions


def test_imports_inside_functions_are_found():
    tree = ast.parse("import a\ndef f():\n    import b\n    def g():\n        import c\n")
    found = sorted((n.names[0].name, inside) for n, inside in _import_nodes(tree))
    assert found == [("a", False), ("b", True), ("c", True)]


def test_nclab_imports_inside_functions_only_at_the_boundaries():
    """An nclab module imported inside a function, outside FUNCTION_IMPORTS_ALLOWED, fails:
    import it at module level."""
    assert sorted(function_level_imports()) == []


def test_every_allowed_boundary_names_modules():
    modules = _modules()
    assert [p for p in FUNCTION_IMPORTS_ALLOWED if not any(_matches(p, m) for m in modules)] == []


def test_dependencies_point_down_the_layers():
    bad = [
        f"{m} -> {d}"
        for m, deps in import_graph().items()
        for d in deps
        if _area(d) != _area(m) and _layer(d) > _layer(m)
    ]
    assert bad == []


def test_theory_imports_only_errors_of_nclab():
    bad = [
        f"{m} -> {d}"
        for m, deps in import_graph().items()
        if _area(m) == "theory"
        for d in deps
        if _area(d) not in THEORY_MAY_IMPORT
    ]
    assert bad == []


def test_no_experiment_imports_another():
    def experiment(module: str) -> str | None:
        parts = module.split(".")
        if (
            len(parts) > 2
            and parts[1] == "experiments"
            and (PKG / "experiments" / parts[2]).is_dir()
        ):
            return None if parts[2] == "common" else parts[2]
        return None

    bad = [
        f"{m} -> {d}"
        for m, deps in import_graph().items()
        for d in deps
        if experiment(m) and experiment(d) and experiment(m) != experiment(d)
    ]
    assert bad == []


#: the claim report (report.md, .html, .json, evidence figures): a package of reproduce above the
#: rest of it, imported of reproduce only by the verb that writes the reports
CLAIM_REPORT = "nclab.reproduce.reports"
REPORT_WRITERS = {"nclab.reproduce.runner"}


def test_the_claim_report_sits_above_the_judging():
    """Judging (registry, checks, outcomes, judge, results, ...) never imports the report; the
    report reads their results; the figure helpers (nclab.report) import no claim report."""
    inside = lambda m: m == CLAIM_REPORT or m.startswith(CLAIM_REPORT + ".")
    g = import_graph()
    importers = {
        m
        for m, deps in g.items()
        if _area(m) == "reproduce" and not inside(m)
        for d in deps
        if inside(d)
    }
    assert importers == REPORT_WRITERS
    assert any(inside(d) for d in g["nclab.reproduce.runner"])
    assert any(
        d == "nclab.reproduce.results" or d.startswith("nclab.reproduce.instance")
        for m in g
        if inside(m)
        for d in g[m]
    )
    assert {m for m in g if _area(m) == "report"} == {"nclab.report", "nclab.report.figures"}


def test_no_two_orchestration_modules_share_a_name():
    """reproduce/, cli/ and report/ each name their files for what they do (no three
    ``reproduce.py`` any more); experiment packages share file names on purpose."""
    names: dict[str, list[str]] = {}
    for m in _modules():
        if _area(m) in {"reproduce", "cli", "report"} and not m.endswith("__init__"):
            names.setdefault(m.rpartition(".")[2], []).append(m)
    assert {k: v for k, v in names.items() if len(v) > 1} == {}
    assert not (PKG / "cli" / "reproduce.py").exists()
    assert not (PKG / "report" / "reproduce.py").exists()


def _long_without_reason() -> list[str]:
    out = []
    for name, path in _modules().items():
        text = path.read_text()
        tree = ast.parse(text)
        lines = len(text.splitlines())
        doc = ast.get_docstring(tree) or ""
        if lines > MODULE_LINES and REASON not in doc:
            out.append(f"{name}: {lines} lines")
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = node.end_lineno - node.lineno + 1
                if n > FUNCTION_LINES and REASON not in (ast.get_docstring(node) or ""):
                    out.append(f"{name}.{node.name}: {n} lines")
    return out


def test_sizes_or_reasons():
    """Modules over 400 lines and functions over 60 lines say why in their docstring, in a line
    starting with ``Length:``."""
    assert _long_without_reason() == []


@pytest.mark.parametrize(
    "module", ["nclab.theory", "nclab.stats", "nclab.metrics", "nclab.collapse", "nclab.curvature"]
)
def test_core_never_imports_training_code(module):
    g = import_graph()
    seen, todo = set(), [m for m in g if m == module or m.startswith(module + ".")]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo.extend(g.get(m, ()))
    assert not {m for m in seen if _area(m) in {"experiments", "train", "models", "reproduce"}}


def test_the_cli_and_the_package_start_without_torch():
    """`nclab --help` stays fast: neither `import nclab` nor the CLI's modules import torch (the
    verbs import it when they run; nclab.ClassStats & co. load it on first access)."""
    import subprocess
    import sys

    code = "import sys, nclab, nclab.cli; print('torch' in sys.modules, nclab.__version__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == "False", out.stdout
