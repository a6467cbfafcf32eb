"""Every miss carries its diagnosis: judged on the committed ledger, each claim's scale that is
partial, contradicted or inconclusive has a one-line diagnosis (the claim's own for partial and
contradicted outcomes, whose reasons alone cannot say why), and every piece of evidence a
declared diagnosis names is in the ledger (a record, or an outside source under external/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nclab.evidence import Ledger
from nclab.reproduce.judge import judge_claim
from nclab.reproduce.registry import all_claims
from nclab.verdicts import SCALES, Outcome

LEDGER = Path(__file__).resolve().parents[1] / "evidence"
MISSES = (Outcome.PARTIAL, Outcome.CONTRADICTED, Outcome.INCONCLUSIVE)


@pytest.fixture(scope="module")
def judged():
    ledger = Ledger(LEDGER)
    return ledger, [(c, judge_claim(c, ledger)) for c in all_claims()]


def test_every_miss_has_a_diagnosis(judged):
    _, results = judged
    missing = []
    for claim, res in results:
        for scale in SCALES:
            sd = res.scales[scale]
            if sd["outcome"] not in MISSES:
                continue
            d = sd.get("diagnosis")
            if not d or not d.get("text"):
                missing.append(f"{claim.id} at {scale}: {sd['outcome']} without a diagnosis")
            elif sd["outcome"] != Outcome.INCONCLUSIVE and d.get("derived"):
                missing.append(f"{claim.id} at {scale}: {sd['outcome']} needs its own diagnosis")
    assert missing == []


def test_every_declared_diagnosis_names_evidence_the_ledger_holds(judged):
    ledger, _ = judged
    unresolved = [
        f"{claim.id} [{key}]: {ref}"
        for claim in all_claims()
        for key, d in claim.diagnosis.items()
        for ref in d.evidence
        if ledger.resolve(ref) is None
    ]
    assert unresolved == []
    declared = [d for c in all_claims() for d in c.diagnosis.values()]
    assert declared and all(d.evidence for d in declared)  # none stands on words alone


def test_the_miss_a_reviewer_can_cite_is_backed_by_the_authors_code():
    """fig3-pca is the paper's own miss: the authors' notebook, recorded beside the ledger,
    prints the σ3 our faithful runs give, not the paper's."""
    import json

    notes = json.loads(
        (LEDGER / "external" / "feature-collapse" / "authors-notebooks.json").read_text()
    )
    theirs = notes["notebooks"]["reproduce_fig3.ipynb"]["pca_words"][2]
    printed = notes["paper"]["fig3_pca_words"][2]
    ledger = Ledger(LEDGER)
    ours = ledger.find("feature-collapse", "fig3")[0].summary["pca_singular_values"]["words"][2]
    assert abs(ours - theirs) / theirs < 0.15 and theirs > 100 * printed
