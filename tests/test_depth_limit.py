"""Súkeník et al.'s limit lim_L L*_{L,1} = L*_GUFM read on a depth sweep (issue 50): the fit of the
objective against depth as L_inf + c L^-a, and the L-RN1 claims' checks on it, which pass on a sweep
converging to L*_GUFM and fail on one that levels off above it or cannot resolve its limit."""

import pytest

from nclab.experiments.deep_ln.limit import fit_power_limit, limit
from nclab.experiments.deep_ln.summary import depth_limit
from nclab.reproduce import select

DEPTHS = [2, 3, 5, 8, 13]
LIMIT_CLAIMS = ["sukenik/rn1-depth-ce", "sukenik/rn1-depth-mse", "sukenik/rn1-depth-ce-cifar10"]


def _sweep(lim: float, c: float, a: float, wiggle: float = 0.0) -> list[float]:
    """Objectives L_inf + c L^-a at DEPTHS, with a deterministic alternating error."""
    return [lim + c * L**-a + wiggle * (-1) ** i for i, L in enumerate(DEPTHS)]


@pytest.mark.parametrize("a", [0.3, 0.5, 1.0, 2.0])
def test_the_fit_recovers_a_power_laws_limit_and_exponent(a):
    fit = fit_power_limit(DEPTHS, _sweep(0.02, 0.05, a))
    assert fit["limit"] == pytest.approx(0.02, abs=1e-9)
    assert fit["exponent"] == pytest.approx(a, rel=1e-5)
    assert fit["coefficient"] == pytest.approx(0.05, rel=1e-5)
    assert fit["residual_rms"] < 1e-10 and fit["points"] == 5


def test_the_fit_needs_four_depths():
    assert fit_power_limit([2, 5, 13], [0.07, 0.06, 0.05]) is None
    assert limit([2, 5, 13], [0.07, 0.06, 0.05], 0.02) is None
    assert limit(DEPTHS, _sweep(0.02, 0.05, 0.5), None) is None  # no optimum shared by the depths


def test_the_standard_error_grows_with_the_noise():
    small = fit_power_limit(DEPTHS, _sweep(0.02, 0.05, 0.5, 1e-5))
    large = fit_power_limit(DEPTHS, _sweep(0.02, 0.05, 0.5, 1e-3))
    assert 0 < small["stderr"] < large["stderr"]
    assert abs(small["limit"] - 0.02) < 3 * small["stderr"]


def test_depth_limit_reads_the_sweep_and_skips_depth_dependent_optima():
    rows = {L: {"objective": v, "theory": {"objective": 0.02}} for L, v in zip(
        DEPTHS, _sweep(0.02, 0.05, 0.5, 1e-5), strict=True
    )}  # fmt: skip
    out = depth_limit(rows)
    assert out["gufm"] == 0.02 and out["deviation_se"] < 2 and out["resolution"] < 1
    for i, L in enumerate(DEPTHS):  # λ/L: each depth its own optimum, no common limit
        rows[L]["theory"] = {"objective": 0.02 / (i + 1)}
    assert depth_limit(rows) is None


def _checks(claim_id: str):
    claim = select([claim_id])[0]
    return {c.name: c for c in claim.checks}


@pytest.mark.parametrize("claim_id", LIMIT_CLAIMS)
def test_the_limit_checks_pass_on_convergence_and_fail_on_a_plateau(claim_id):
    checks = _checks(claim_id)
    lim, res = checks["limit-is-gufm"], checks["limit-resolved"]
    assert lim.kind == res.kind == "statement"
    assert checks["gap-shrinks"].kind == "sanity"  # the former proxy, kept
    # converging to L*_GUFM = 0.02 (a small measurement error): both hold
    good = {"main": {"limit": limit(DEPTHS, _sweep(0.02, 0.05, 0.5, 2e-5), 0.02)}}
    assert lim.evaluate(good)["passed"] and res.evaluate(good)["passed"]
    # levelling off at 0.03, above L*_GUFM: the limit is not L*_GUFM
    plateau = {"main": {"limit": limit(DEPTHS, _sweep(0.03, 0.05, 0.5, 2e-5), 0.02)}}
    out = lim.evaluate(plateau)
    assert out["passed"] is False and out["value"] > 2
    # nearly at its limit by the deepest depth, with errors of the size of its gap: the limit
    # is within 2 standard errors, but the interval is wider than the deepest gap (the first
    # check alone would pass it): not resolved
    errors = [1e-3, -1e-3, -1e-3, 1e-3, 0.0]
    near = [0.02 + 0.05 * L**-1.5 + e for L, e in zip(DEPTHS, errors, strict=True)]
    noisy = {"main": {"limit": limit(DEPTHS, near, 0.02)}}
    assert lim.evaluate(noisy)["passed"] and res.evaluate(noisy)["passed"] is False
    # a record without the fit (three depths): not a number, not a pass
    assert lim.evaluate({"main": {"limit": None}})["passed"] is False


def test_the_limit_is_checked_only_where_the_appendix_proves_it():
    for claim in select(["sukenik/rn2-depth-ce", "sukenik/t11-depth-ce"]):
        names = {c.name for c in claim.checks}
        assert "limit-is-gufm" not in names and "gap-shrinks" in names
        assert next(c for c in claim.checks if c.name == "gap-shrinks").kind == "statement"
