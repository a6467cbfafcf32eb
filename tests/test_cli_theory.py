"""`nclab theory`: parameter parsing against the prediction's signature, errors, --list."""

import json

import pytest

from nclab.cli import main
from nclab.theory import PREDICTIONS, get_prediction


def run(args, capsys):
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def test_every_registered_prediction_imports():
    for name in PREDICTIONS:
        assert callable(get_prediction(name)), name


def test_list_json(capsys):
    code, out, _ = run(["theory", "--list", "--json"], capsys)
    rows = json.loads(out)
    assert code == 0 and set(rows) == set(PREDICTIONS)
    assert all(r["params"] for r in rows.values())


def test_sequence_or_scalar_parameter(capsys):
    base = [
        "theory",
        "deep-linear-ufm",
        "--K",
        "4",
        "--n",
        "50",
        "--d",
        "20",
        "--lambda-h",
        "0.005",
        "--json",
    ]
    code, out, _ = run([*base, "--lambda-w", "0.005,0.005,0.005"], capsys)
    listed = json.loads(out)
    assert code == 0 and listed["params"]["lambda_w"] == [0.005, 0.005, 0.005]
    code, out, _ = run([*base, "--lambda-w", "0.005", "--L", "3"], capsys)
    scalar = json.loads(out)
    assert code == 0 and scalar["params"]["lambda_w"] == 0.005
    assert scalar["prediction"]["objective"] == pytest.approx(listed["prediction"]["objective"])


@pytest.mark.parametrize(
    "args,match",
    [
        (["theory", "nope"], "unknown prediction 'nope'"),
        (["theory", "ufm-mse", "--K", "4"], "missing parameters: --n"),
        (["theory", "ufm-mse", "--K", "four"], "cannot read 'four' as int"),
        (["theory", "ufm-mse", "--bogus", "1"], "unknown parameter --bogus"),
        (["theory", "ufm-mse", "--K", "2.5"], "cannot read '2.5' as int"),
    ],
)
def test_bad_parameters_exit_2(capsys, args, match):
    code, out, err = run(args, capsys)
    assert code == 2 and out == "" and match in err and err.count("\n") == 1


def test_json_tells_an_infinite_bound_from_an_undefined_value(capsys):
    """JSON writes every non-finite number as null (nclab.runs.to_jsonable); `non_finite` says
    which of the prediction's nulls is +inf (a bound too large for a float)."""
    args = "theory jacot-conditioning --K 10 --L1 3 --L2 2 --x-op 1e3 --N 100 --eps1 0.1"
    code, out, _ = run([*args.split(), "--theta-sq", "5000", "--json"], capsys)
    printed = json.loads(out)
    assert code == 0 and printed["prediction"]["kappa_product_bound"] is None
    assert printed["non_finite"]["kappa_product_bound"] == "inf"
    assert set(printed["non_finite"].values()) == {"inf"}
    assert printed["prediction"]["log_kappa_product_bound"] > 709
    finite = "theory ufm-mse --K 4 --n 50 --d 20 --lambda-w 0.005 --lambda-h 0.005 --json"
    code, out, _ = run(finite.split(), capsys)
    assert code == 0 and "non_finite" not in json.loads(out)
