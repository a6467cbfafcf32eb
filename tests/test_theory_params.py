"""nclab.theory.params (the shared parameter checks) and the import structure of nclab.theory."""

import ast
import math
import pathlib
from fractions import Fraction

import numpy as np
import pytest

from nclab.errors import TheoryError
from nclab.theory import params as P

THEORY = pathlib.Path(P.__file__).parent


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: P.check_int("K", 1, 2), "K must be an integer >= 2, got 1"),
        (lambda: P.check_int("K", 2.0, 2), "K must be an integer >= 2, got 2.0"),
        (lambda: P.check_int("L", True, 0), "L must be an integer >= 0, got True"),
        (lambda: P.check_int("N", 3, 4, min_label="K = 4"), "N must be an integer >= K = 4"),
        (lambda: P.check_int("n", 0, 1, why="a class needs samples"), "got 0: a class needs"),
        (lambda: P.check_number("r", 0.0, lo=0.0, lo_open=True), "r must be a finite number > 0"),
        (lambda: P.check_number("eps", -1, lo=0.0), "eps must be a finite number >= 0, got -1"),
        (lambda: P.check_number("p", 2.0, lo=0.0, hi=1.0), ">= 0 and <= 1, got 2.0"),
        (lambda: P.check_number("x", float("nan")), "x must be a finite number, got nan"),
        (lambda: P.check_number("x", math.inf, lo=0.0), "finite number >= 0, got inf"),
        (lambda: P.check_number("x", "0.1"), "finite number, got '0.1'"),
        (lambda: P.check_number("x", None), "got None"),
        (lambda: P.check_positive("lambda_h", -0.01), "lambda_h must be a finite number > 0"),
        (lambda: P.check_positive("lambda_b", -1, allow_zero=True), "lambda_b must be a finite"),
        (lambda: P.check_number_list("lambda_w", 0.1), "give L \\(the number of values\\)"),
        (lambda: P.check_number_list("lambda_w", []), "at least one value, got an empty list"),
        (lambda: P.check_number_list("lambda_w", [0.1, 0.1], 3), "L = 3 but 2 lambda_w values"),
        (lambda: P.check_number_list("lambda_w", [0.1, -1.0]), "lambda_w\\[1\\] must be"),
        (lambda: P.check_number_list("lambda_w", "0.1"), "a number or a list of numbers"),
        (lambda: P.check_number_list("lambda_w", 0.1, 0), "L must be an integer >= 1"),
        (lambda: P.check_choice("bias", "x", ("none", "free")), "one of 'none', 'free', got 'x'"),
        (lambda: P.check_multiple("nw", 10, 3, of_label="nc = 3"), "multiple of nc = 3, got 10"),
        (lambda: P.check_multiple("nw", 0, 3, of_label="nc"), "positive multiple"),
        (lambda: P.check_probabilities("mu", [0.5, 0.5], 3), "mu must list 3 values, got 2"),
        (lambda: P.check_probabilities("mu", [[0.5, 0.5]], 2), "shape \\(1, 2\\)"),
        (lambda: P.check_probabilities("mu", [1.5, -0.5], 2), "finite and > 0"),
        (lambda: P.check_probabilities("mu", [0.5, 0.4], 2), "sum to 1"),
        (lambda: P.check_sizes(4, 0, 8), "n must be an integer >= 1"),
        (lambda: P.require(False, "the hypothesis"), "the hypothesis"),
    ],
)
def test_checkers_name_the_parameter_the_value_and_what_is_accepted(call, match):
    with pytest.raises(TheoryError, match=match):
        call()


def test_checkers_return_the_value():
    assert P.check_int("K", np.int64(3), 2) == 3
    assert P.check_number("x", None, allow_none=True) is None
    for v in (1, 0.5, np.float32(0.5), np.int64(2), Fraction(1, 4)):
        out = P.check_number("x", v, lo=0.0, lo_open=True)
        assert type(out) is float and out == float(v)
    assert P.check_positive("lam", 0, allow_zero=True) == 0.0
    assert P.check_number_list("lambda_w", 0.5, 3) == [0.5, 0.5, 0.5]
    assert P.check_number_list("lambda_w", (1, 2)) == [1.0, 2.0]
    assert P.check_number_list("lambda_w", np.array([0.1, 0.2]), 2) == [0.1, 0.2]
    assert P.check_number_list("lambda_w", [0.0, 1.0], lo=0.0, lo_open=False) == [0.0, 1.0]
    assert P.check_choice("bias", "free", ("none", "free")) == "free"
    assert P.check_multiple("nw", 9, 3, of_label="nc") == 9
    m = P.check_probabilities("mu", [0.25, 0.75], 2)
    assert m.dtype == np.float64 and m.tolist() == [0.25, 0.75]
    assert P.is_int(np.int32(1)) and not P.is_int(True) and not P.is_int(1.0)
    assert P.is_number(np.float64(1)) and not P.is_number(False) and not P.is_number("1")


def _theory_imports(path: pathlib.Path) -> set[str]:
    """nclab.theory modules imported by ``path`` (anywhere, functions included; TYPE_CHECKING
    blocks excluded)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for n in ast.walk(node)
    }
    out = set()
    for n in ast.walk(tree):
        if id(n) in skipped:
            continue
        if isinstance(n, ast.ImportFrom) and n.level == 1:
            out |= {n.module.split(".")[0]} if n.module else {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
            if n.module.startswith("nclab.theory."):
                out.add(n.module.split(".")[2])
        elif isinstance(n, ast.Import):
            out |= {a.name.split(".")[2] for a in n.names if a.name.startswith("nclab.theory.")}
    return out


def test_no_import_cycle_among_theory_modules():
    mods = {p.stem: p for p in THEORY.glob("*.py")}
    graph = {m: {d for d in _theory_imports(p) if d in mods and d != m} for m, p in mods.items()}
    assert "bounds" not in graph["bounds_certificate"] | graph["bounds_theorem"]
    done: set[str] = set()

    def visit(m, path):
        assert m not in path, "import cycle: " + " -> ".join([*path, m])
        if m not in done:
            for d in sorted(graph[m]):
                visit(d, [*path, m])
            done.add(m)

    for m in sorted(graph):
        visit(m, [])


def test_public_import_paths_are_kept():
    from nclab.theory.bounds import (  # noqa: F401
        JacotBounds,
        JacotCertificate,
        NetworkQuantities,
        jacot_bounds,
        jacot_certificate,
        lemma_c2_bound,
        nc1_bound,
        nc2_bound,
        nc3_bound,
        psi,
    )
    from nclab.theory.bounds_certificate import jacot_certificate as cert
    from nclab.theory.feature_collapse import (  # noqa: F401
        equiangular_frame,
        fc_thm1,
        fc_thm2,
        fc_thm3,
        regularised_risk,
        word_frequencies,
    )
    from nclab.theory.ufm import check_int, check_positive, check_sizes  # noqa: F401

    assert cert is jacot_certificate and check_int is P.check_int
