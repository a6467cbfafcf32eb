"""The theory beside the measurements: which of the paper's theorems (``fc-thm1/2/3``) applies to
a configuration, and the summary of a unit (final measures, theory, the paper's values, gaps)."""

from __future__ import annotations

import itertools
from typing import Any

from ...data.sentences import frequencies
from ...errors import TheoryError
from ...theory.feature_collapse import fc_thm1, fc_thm2, fc_thm3
from ...theory.feature_collapse_model import thm2_lambda_bound
from .config import FCConfig, weight_decays
from .presets import PAPER


def theory_for(cfg: FCConfig) -> dict[str, Any]:
    """The fc-thm* predictions that apply to this configuration (others with the reason)."""
    lam_w, lam_u = weight_decays(cfg)
    out: dict[str, Any] = {"which": None}

    def attempt(name, fn, keep: dict[str, str], **kw) -> None:
        """The theorem's prediction under ``name``; where it applies it is the configuration's
        (``which``), its values ``keep`` (summary key -> prediction key) at the top level."""
        try:
            p = fn(**kw).to_dict()
        except TheoryError as exc:
            p = {"applies": False, "reason": str(exc)}
        out[name] = p
        if p.get("applies"):
            out.update(which=name, **{key: p[ref] for key, ref in keep.items()})

    d, ln = cfg.data, cfg.model.layer_norm
    if ln == "none" and lam_w == lam_u:
        # Theorem 2's bound, whether the theorem applies or not (§3.1: "In our experiments, λ
        # satisfies this bound"): as stated (K = nc^L, the theorem's assumption) and with the
        # run's own K (the paper's experiments have K = 1000 classes)
        mu = frequencies(d.nw // d.nc, d.freq, d.zipf_s)
        out.update(
            lam=lam_u,
            lam_bound_thm2=thm2_lambda_bound(d.nc, d.L, mu),
            lam_bound_thm2_run_k=thm2_lambda_bound(d.nc, d.L, mu, K=d.K),
        )
    if ln == "none":
        if lam_w != lam_u:
            out["note"] = "Theorems 1-2 need the same weight decay on W and U"
        elif d.freq == "uniform":
            keep = {"word_norm": "word_norm", "u_norm": "u_norm", "objective": "objective"}
            attempt(
                "fc-thm1", fc_thm1, keep, nc=d.nc, nw=d.nw, L=d.L, K=d.K, lam=lam_u, d=cfg.model.d
            )
        else:
            mu = frequencies(d.nw // d.nc, d.freq, d.zipf_s).tolist()
            keep = {"u_norm": "c", "word_norms": "r"}
            attempt("fc-thm2", fc_thm2, keep, nc=d.nc, nw=d.nw, L=d.L, lam=lam_u, mu=mu, K=d.K)
    elif ln == "fixed" and lam_w == 0:
        keep = {"u_norm": "u_norm", "word_rep_norm": "word_rep_norm", "objective": "objective"}
        attempt("fc-thm3", fc_thm3, keep, nc=d.nc, L=d.L, K=d.K, lam=lam_u, d=cfg.model.d)
    else:
        out["note"] = (
            "Theorem 3 assumes a parameter-free LayerNorm and no weight decay on W; "
            "no theorem covers this network"
        )
    return out


def unit_summary(
    cfg: FCConfig, steps: int, final: dict[str, Any], history: list[dict[str, Any]]
) -> dict[str, Any]:
    """A unit's summary from the final measures (:func:`~.measure.measure` with ``full``), the
    number of optimiser steps and the logged records."""
    theory = theory_for(cfg)
    ln = cfg.model.layer_norm
    out = {
        "test_acc": final["test_acc"],
        "train_acc": final["train_acc"],
        "train_loss": final["train_ce"],
        "train_objective": final["train_objective"],
        "word_norm_mean": final["word_norm_mean"],
        "word_norm_std": final["word_norm_std"],
        "rep_norm_mean": final["rep_norm_mean"],
        "u_norm_mean": final["u_norm_mean"],
        "u_norm_std": final["u_norm_std"],
        "collapse_type": final["collapse_type"],
        "embedding_metrics": final["embedding_metrics"],
        "theory": theory,
        "paper": PAPER.get(cfg.figure, {}),
        "peak_test_acc": max([r.get("test_acc", 0.0) for r in history] + [final["test_acc"]]),
        "optimizer": cfg.train.optimizer,
        "epochs": history[-1]["epoch"] if history else 0,
        "steps": steps,
        "network": "h" if ln == "none" else f"h* ({ln} LayerNorm)",
    }
    gaps = {}
    for key, ref in (
        ("word_norm_mean", "word_norm"),
        ("u_norm_mean", "u_norm"),
        ("train_objective", "objective"),
    ):
        if isinstance(theory.get(ref), float) and theory[ref]:
            gaps[key] = (out[key] - theory[ref]) / theory[ref]
    if theory["which"] == "fc-thm2":  # Theorem 2's magnitudes, word by frequency rank
        r, got = theory["word_norms"], final["word_norms_by_rank"]
        gaps["word_norms_by_rank_max"] = max(abs(g - t) / t for g, t in zip(got, r, strict=True))
    out["theory_rel_gap"] = gaps
    out["norm_growth"] = norm_growth(history)
    # the mean norm of the β-th most frequent words of the concepts falls with β (Theorem 2,
    # Proposition D: r_1 >= ... >= r_sc): the smallest relative fall between consecutive ranks
    # (written since issue 50; > 0 when strictly ordered)
    ranks = final.get("word_norms_by_rank") or []
    if len(ranks) > 1:
        out["rank_norm_min_step"] = min((a - b) / a for a, b in itertools.pairwise(ranks) if a > 0)
    return out


#: the logged measures :func:`norm_growth` follows
_GROWTH = {"word_norm_mean": "w", "u_norm_mean": "u", "train_ce": "loss"}


def norm_growth(history: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The second half of training in the logged records (written since issue 50: §2's remark
    that without weight decay the objectives have no minimiser, so the weights keep growing as
    the loss falls): the mean word-embedding norm, the mean u_{k,ℓ} norm and the training
    cross-entropy at the end over their value at the first record of the second half
    (``*_ratio``), and the fraction of steps between consecutive records of the second half
    where the norm grew (``*_rising``). None with fewer than two such records."""
    recs = [r for r in history if all(isinstance(r.get(k), float | int) for k in _GROWTH)]
    if not recs:
        return None
    half = [r for r in recs if r["epoch"] >= recs[-1]["epoch"] / 2]
    if len(half) < 2:
        return None
    out: dict[str, Any] = {"from_epoch": half[0]["epoch"], "to_epoch": half[-1]["epoch"]}
    for key, short in _GROWTH.items():
        first, last = float(half[0][key]), float(half[-1][key])
        out[f"{short}_ratio"] = last / first if first > 0 else None
        if short != "loss":
            steps = list(itertools.pairwise(half))
            out[f"{short}_rising"] = sum(b[key] > a[key] for a, b in steps) / len(steps)
    return out
