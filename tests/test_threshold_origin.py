"""Thresholds we chose are marked as ours, with the reason, and the reports say so (issue 26)."""

import pytest

from nclab.errors import ConfigError
from nclab.reproduce.checks import Check, Ratio, at_most, fixed_threshold
from nclab.reproduce.registry import select
from nclab.reproduce.reports.views import check_cell, threshold_origin


def test_every_claim_says_whose_threshold():
    """Every fixed-value statement check of every claim says whether its number is ours (with
    the reason) or the paper's (with where)."""
    missing = [
        f"{c.id}:{k.name}"
        for c in select([])
        for k in c.checks
        if k.kind == "statement" and fixed_threshold(k) and not (k.ours or k.source)
    ]
    assert missing == []


def test_every_threshold_of_ours_states_its_principle():
    """Every threshold we chose says which principle gives its value (numerical precision, a
    tolerance derived from the theory, the paper's printed precision, a clear change on a log
    plot, a level for words the paper gives without a number, the run's design, the uncertainty
    of a fit), and the reports print it beside the reason."""
    from nclab.reproduce.checks import Ours, Principle, ours

    missing = [
        f"{c.id}:{k.name}"
        for c in select([])
        for k in c.checks
        if k.ours and not isinstance(k.ours, Ours)
    ]
    assert missing == []
    used = {k.ours.principle for c in select([]) for k in c.checks if k.ours}
    assert used == set(Principle)  # every principle stands behind some threshold
    chk = at_most("x", 0.1, ours=ours(Principle.NUMERICAL, "float64 slack"))
    out = chk.evaluate({"main": {"x": 0.5}})
    assert threshold_origin(out) == "threshold ours (numerical precision): float64 slack"


def test_ours_and_source_exclude_each_other():
    with pytest.raises(ConfigError, match="not both"):
        Check("x <= 1", path="x", value=1.0, ours="a reason", source="Fig. 1")


def test_fixed_threshold():
    assert fixed_threshold(at_most("x", 1.0))
    assert fixed_threshold(Ratio("a / b < 2", "a", "b", 2.0))
    assert not fixed_threshold(Check("a <= b", path="a", ref="b"))


def test_outcome_and_report_carry_the_reason():
    chk = at_most("x", 0.1, ours="our tolerance")
    out = chk.evaluate({"main": {"x": 0.5}})
    assert out["ours"] == "our tolerance" and out["passed"] is False
    assert threshold_origin(out) == "threshold ours: our tolerance"
    assert check_cell(out)[2] == "0.5 (threshold 0.1, ours)"
    paper = at_most("x", 0.1, source="Fig. 3")
    assert (
        threshold_origin(paper.evaluate({"main": {"x": 0.0}})) == "threshold: the paper's (Fig. 3)"
    )
