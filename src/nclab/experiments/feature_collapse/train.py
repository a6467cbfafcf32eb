"""Feature collapse (Laurent, von Brecht & Bresson, ICLR 2024): Fig. 3, K = 50, Fig. 4a–c, A.1, A.2.

``nclab run feature-collapse --preset fig3`` trains the network h (or h*) of the paper on the
concept/word sentence task, logs train loss, test accuracy and the embedding-level collapse measures
(:mod:`nclab.metrics.embedding`) every ``log_every`` epochs, checkpoints, and writes a summary with
the theory's prediction (``fc-thm1/2/3``) and the paper's values beside the measurements, plus the
PCA figure of both weight sets coloured by concept (the paper's Fig. 3/4 panels).

Trainers (``optimizer``):

* ``"sgd"`` (default, faithful): the authors' recipe — SGD, lr 0.1, batch 100, no momentum,
  reshuffled every epoch, weight decay λ — with the hand-written step
  :func:`nclab.models.wordnet.sgd_step` (same update as ``torch.optim.SGD``, ~1.4x faster).
* ``"lbfgs"`` (fast path): full-batch L-BFGS on the *same* regularised empirical objective
  (:func:`nclab.models.wordnet.full_batch_objective`), one "epoch" = ``lbfgs_iters`` iterations.
  It reaches the minimiser SGD approaches, which the theory describes; it needs λ > 0 (without
  weight decay there is no minimiser).

Both run inside :func:`nclab.train.fit` (checkpoints every ``checkpoint_every`` epochs; ``nclab run
--resume DIR`` continues to the same numbers).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

import torch

from ..config import Config
from ..errors import ConfigError
from ..runs import RunDir
from ..train import fit
from .base import Experiment
from .feature_collapse_presets import PAPER, PRESETS


class FCConfig(Config):
    seed: int = 0
    figure: str = ""  # which paper figure the run reproduces (selects the paper's values)
    # data model
    nc: int = 3
    nw: int = 1200
    L: int = 15
    K: int = 1000
    freq: Literal["uniform", "zipf"] = "uniform"
    zipf_s: float = 1.0
    distinct: bool = False
    nspl: int = 5
    n_test: int = 5
    # network
    d: int = 100
    layer_norm: Literal["none", "fixed", "learnable"] = "none"
    ln_eps: float = 1e-5
    init_scale: float = 1e-3
    # objective: weight decay lam on U, and on W for h (lam_w: None = lam for h, 0 for h*)
    lam: float = 1e-3
    lam_w: float | None = None
    # trainer
    optimizer: Literal["sgd", "lbfgs"] = "sgd"
    epochs: int = 1200
    lr: float = 0.1
    batch_size: int = 100
    lbfgs_iters: int = 10
    lbfgs_history: int = 20
    dtype: Literal["float32", "float64"] = "float32"
    log_every: int = 100
    checkpoint_every: int = 100
    threads: int = 0  # torch intra-op threads for this run (0: leave torch's setting)


def weight_decays(cfg: FCConfig) -> tuple[float, float]:
    """(λ_W, λ_U): the paper's eq. 2 (h: λ on both) and eq. 3 (h*: λ on U only) unless lam_w set."""
    lam_w = cfg.lam_w if cfg.lam_w is not None else (cfg.lam if cfg.layer_norm == "none" else 0.0)
    return lam_w, cfg.lam


def validate(cfg: FCConfig) -> None:
    if cfg.nspl < 1 or cfg.n_test < 1:
        raise ConfigError(f"nspl and n_test must be >= 1, got nspl={cfg.nspl}, n_test={cfg.n_test}")
    lam_w, lam_u = weight_decays(cfg)
    for name, v in (("lam", lam_u), ("lam_w", lam_w)):
        if not (math.isfinite(v) and v >= 0):
            raise ConfigError(f"{name} must be a finite number >= 0, got {v}")
    if cfg.optimizer == "lbfgs" and lam_u == 0:
        raise ConfigError("optimizer='lbfgs' needs lam > 0: without weight decay the objective has "
                          "no minimiser (use optimizer='sgd' for the no-weight-decay runs)")
    if cfg.epochs < 1 or cfg.batch_size < 1 or not cfg.lr > 0:
        raise ConfigError("epochs and batch_size must be >= 1 and lr > 0")


# --------------------------------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------------------------------


class Trainer:
    """The network, its data and one of the two trainers, with the hooks :func:`fit` calls."""

    def __init__(self, cfg: FCConfig):
        from ..data.sentences import generator, make_dataset, make_task
        from ..models.wordnet import WordNet

        validate(cfg)
        if cfg.threads > 0:
            torch.set_num_threads(cfg.threads)
        self.cfg = cfg
        self.dtype = torch.float64 if cfg.dtype == "float64" else torch.float32
        self.task = make_task(cfg.nc, cfg.nw, cfg.L, cfg.K, cfg.freq, cfg.zipf_s, cfg.distinct,
                              cfg.seed)
        self.data = make_dataset(self.task, cfg.nspl, cfg.n_test, cfg.seed)
        self.net = WordNet(cfg.nw, cfg.L, cfg.d, cfg.K, cfg.layer_norm, cfg.ln_eps, cfg.init_scale,
                           generator=generator(cfg.seed, 3), dtype=self.dtype)
        self.lam_w, self.lam_u = weight_decays(cfg)
        self.batch_gen = generator(cfg.seed, 4)
        self.steps = 0
        self.converged = False
        self.opt = None
        if cfg.optimizer == "lbfgs":
            self.opt = torch.optim.LBFGS(list(self.net.parameters()), lr=1.0,
                                         max_iter=cfg.lbfgs_iters,
                                         max_eval=4 * cfg.lbfgs_iters + 20,
                                         history_size=cfg.lbfgs_history,
                                         tolerance_grad=1e-12, tolerance_change=0.0,
                                         line_search_fn="strong_wolfe")
            self.prev_objective = math.inf
            self.restarted = False

    # --- fit hooks -------------------------------------------------------------------------------
    def train_epoch(self, epoch: int) -> dict[str, Any]:
        return self._lbfgs_epoch() if self.opt is not None else self._sgd_epoch()

    def _sgd_epoch(self) -> dict[str, Any]:
        from ..models.wordnet import sgd_step

        cfg, x, y = self.cfg, self.data.x_train, self.data.y_train
        n = x.shape[0]
        perm = torch.randperm(n, generator=self.batch_gen)
        total = torch.zeros((), dtype=torch.float64)
        nb = 0
        grad_ctx = torch.enable_grad() if cfg.layer_norm == "learnable" else torch.no_grad()
        with grad_ctx:
            for i in range(0, n, cfg.batch_size):
                idx = perm[i : i + cfg.batch_size]
                total += sgd_step(self.net, x[idx], y[idx], cfg.lr, self.lam_w, self.lam_u)
                nb += 1
        self.steps += nb
        loss = float(total) / nb
        if not math.isfinite(loss):
            raise ConfigError(f"training diverged (train loss {loss}); lower lr")
        return {"train_loss": loss}

    def _lbfgs_epoch(self) -> dict[str, Any]:
        from ..models.wordnet import full_batch_objective

        x, y = self.data.x_train, self.data.y_train

        def closure():
            self.opt.zero_grad(set_to_none=True)
            f, _ = full_batch_objective(self.net, x, y, self.lam_w, self.lam_u)
            f.backward()
            return f

        state = self.opt.state[self.opt._params[0]]
        before = int(state.get("n_iter", 0))
        self.opt.step(closure)
        state = self.opt.state[self.opt._params[0]]
        self.steps += int(state.get("n_iter", 0)) - before
        with torch.no_grad():  # the objective at the accepted point
            f, ce = (float(v) for v in full_batch_objective(self.net, x, y, self.lam_w,
                                                            self.lam_u))
        # no progress over an epoch (to the precision of the dtype): first forget the curvature
        # pairs (a stale memory can give a non-descent direction) and retry; converged if a fresh
        # start cannot descend either
        tol = 1e-7 if self.dtype == torch.float32 else 1e-12
        stalled = self.prev_objective - f <= tol * abs(f)
        self.converged = stalled and self.restarted
        if stalled and not self.restarted:
            self.opt.state.clear()
        self.restarted = stalled
        self.prev_objective = f
        return {"train_loss": ce, "objective": f}

    def evaluate(self, epoch: int) -> dict[str, Any]:
        return self.measure(full=False)

    def state(self) -> dict[str, Any]:
        return {"net": self.net.state_dict(), "batch_gen": self.batch_gen.get_state(),
                "steps": self.steps, "prev_objective": getattr(self, "prev_objective", None),
                "restarted": getattr(self, "restarted", False),
                "opt": self.opt.state_dict() if self.opt is not None else None}

    def load_state(self, s: dict[str, Any]) -> None:
        self.net.load_state_dict(s["net"])
        self.batch_gen.set_state(s["batch_gen"])
        self.steps = s["steps"]
        if s.get("prev_objective") is not None:
            self.prev_objective, self.restarted = s["prev_objective"], s["restarted"]
        if self.opt is not None and s.get("opt") is not None:
            self.opt.load_state_dict(s["opt"])

    # --- measurements ----------------------------------------------------------------------------
    @torch.no_grad()
    def accuracy(self, x: torch.Tensor, y: torch.Tensor) -> float:
        correct = 0
        for i in range(0, x.shape[0], 20000):
            correct += int((self.net(x[i : i + 20000]).argmax(1) == y[i : i + 20000]).sum())
        return correct / x.shape[0]

    @torch.no_grad()
    def measure(self, full: bool = True) -> dict[str, Any]:
        from ..metrics.embedding import feature_collapse_measures
        from ..models.wordnet import full_batch_objective

        net, data, task = self.net, self.data, self.task
        f, ce = full_batch_objective(net, data.x_train, data.y_train, self.lam_w, self.lam_u)
        words, u = collapse_views(net)
        m = feature_collapse_measures(
            words, task.word_concept, task.nc, u, task.latents, word_freq=task.word_freq,
            word_counts=data.word_counts(), layer_norm=net.layer_norm_kind != "none",
            geometry=net.layer_norm_kind != "learnable")
        un = u.norm(dim=2)
        out = {
            "test_acc": self.accuracy(data.x_test, data.y_test),
            "train_acc": self.accuracy(data.x_train, data.y_train),
            "train_objective": float(f), "train_ce": float(ce),
            "word_norm_mean": float(net.W.norm(dim=1).mean()),
            "word_norm_std": float(net.W.norm(dim=1).std(correction=0)),
            "rep_norm_mean": m["words"]["norm_mean"],
            "u_norm_mean": float(un.mean()), "u_norm_std": float(un.std(correction=0)),
            "collapse_type": m["collapse_type"], "steps": self.steps,
        }
        keep = ("dir_nc1", "nc1_trace", "etf", "norm_cv", "spearman_norm_freq",
                "spearman_norm_count")
        out["words"] = {k: m["words"].get(k) for k in keep}
        out["u"] = {k: m["u"].get(k) for k in keep[:4]}
        out["alignment"] = m["alignment"]
        if full:
            out["embedding_metrics"] = m
        return out


def collapse_views(net) -> tuple[torch.Tensor, torch.Tensor]:
    """(word vectors, u blocks) whose collapse is measured: W and U for h; φ(W) and U for h*.

    With a learnable LayerNorm, γ⊙φ(w)+β, the words are γ⊙φ(w): the bias β is the same vector for
    every word (its effect, u·β, is a per-class constant), so it is left out.
    """
    import torch.nn.functional as F

    u = net.u_blocks()
    if net.layer_norm_kind != "learnable":
        return net.word_representations(), u
    return F.layer_norm(net.W, (net.d,), eps=net.ln.eps) * net.ln.weight, u


# --------------------------------------------------------------------------------------------------
# theory beside the measurements
# --------------------------------------------------------------------------------------------------


def theory_for(cfg: FCConfig) -> dict[str, Any]:
    """The fc-thm* predictions that apply to this configuration (others with the reason)."""
    from ..errors import TheoryError
    from ..theory.feature_collapse import fc_thm1, fc_thm2, fc_thm3

    lam_w, lam_u = weight_decays(cfg)
    out: dict[str, Any] = {"which": None}

    def attempt(name, fn, **kw):
        try:
            p = fn(**kw).to_dict()
        except TheoryError as exc:
            p = {"applies": False, "reason": str(exc)}
        out[name] = p
        return p

    if cfg.layer_norm == "none":
        if lam_w != lam_u:
            out["note"] = "Theorems 1-2 need the same weight decay on W and U"
        elif cfg.freq == "uniform":
            p = attempt("fc-thm1", fc_thm1, nc=cfg.nc, nw=cfg.nw, L=cfg.L, K=cfg.K, lam=lam_u,
                        d=cfg.d)
            if p.get("applies"):
                out.update(which="fc-thm1", word_norm=p["word_norm"], u_norm=p["u_norm"],
                           objective=p["objective"])
        else:
            from ..data.sentences import frequencies

            mu = frequencies(cfg.nw // cfg.nc, cfg.freq, cfg.zipf_s).tolist()
            p = attempt("fc-thm2", fc_thm2, nc=cfg.nc, nw=cfg.nw, L=cfg.L, lam=lam_u, mu=mu,
                        K=cfg.K)
            if p.get("applies"):
                out.update(which="fc-thm2", u_norm=p["c"], word_norms=p["r"])
    elif cfg.layer_norm == "fixed" and lam_w == 0:
        p = attempt("fc-thm3", fc_thm3, nc=cfg.nc, L=cfg.L, K=cfg.K, lam=lam_u, d=cfg.d)
        if p.get("applies"):
            out.update(which="fc-thm3", u_norm=p["u_norm"], word_rep_norm=p["word_rep_norm"],
                       objective=p["objective"])
    else:
        out["note"] = ("Theorem 3 assumes a parameter-free LayerNorm and no weight decay on W; "
                       "no theorem covers this network")
    return out


# --------------------------------------------------------------------------------------------------
# run
# --------------------------------------------------------------------------------------------------


def run(cfg: FCConfig, run_dir: RunDir) -> dict[str, Any]:
    threads = torch.get_num_threads()
    try:
        return _run(cfg, run_dir)
    finally:
        torch.set_num_threads(threads)  # cfg.threads is for this run only


def _run(cfg: FCConfig, run_dir: RunDir) -> dict[str, Any]:
    from .feature_collapse_figures import save_figures

    tr = Trainer(cfg)
    history = fit(epochs=cfg.epochs, train_epoch=tr.train_epoch, evaluate=tr.evaluate,
                  log_every=cfg.log_every, run=run_dir, state=tr.state, load_state=tr.load_state,
                  checkpoint_every=cfg.checkpoint_every,
                  description=f"feature-collapse {cfg.figure or ''} ({cfg.optimizer})",
                  stop=lambda record: tr.converged)
    torch.save(tr.state(), run_dir.path / "final_state.pt")  # re-measure without retraining
    final = tr.measure(full=True)
    summary = summarize(cfg, tr, final, history)
    summary["figures"] = save_figures(run_dir, tr, history, summary)
    return summary


def remeasure(path: str | Path, figures: bool = True) -> dict[str, Any]:
    """Recompute the summary (and figures) of a finished run from its ``final_state.pt``.

    For when the measures change after a long run: the data are regenerated from the seed, the
    trained weights loaded, and ``summary.json`` rewritten (its ``seconds`` and history kept).
    """
    run_dir = RunDir(path, create=False)
    data = run_dir.read_config()
    data.pop("nclab", None)
    cfg = FCConfig.from_dict(data)
    old = run_dir.read_summary()
    tr = Trainer(cfg)
    tr.load_state(torch.load(run_dir.path / "final_state.pt", weights_only=False))
    history = run_dir.read_metrics()
    summary = summarize(cfg, tr, tr.measure(full=True), history)
    if figures:
        from .feature_collapse_figures import save_figures

        summary["figures"] = save_figures(run_dir, tr, history, summary)
    for key in ("seconds", "versions", "seed", "experiment", "preset", "pca_singular_values"):
        if key in old and key not in summary:
            summary[key] = old[key]
    summary["remeasured"] = True
    return run_dir.write_summary(summary)


def summarize(cfg: FCConfig, tr: Trainer, final: dict[str, Any],
              history: list[dict[str, Any]]) -> dict[str, Any]:
    theory = theory_for(cfg)
    out = {
        "test_acc": final["test_acc"], "train_acc": final["train_acc"],
        "train_loss": final["train_ce"], "train_objective": final["train_objective"],
        "word_norm_mean": final["word_norm_mean"], "word_norm_std": final["word_norm_std"],
        "rep_norm_mean": final["rep_norm_mean"],
        "u_norm_mean": final["u_norm_mean"], "u_norm_std": final["u_norm_std"],
        "collapse_type": final["collapse_type"],
        "embedding_metrics": final["embedding_metrics"],
        "theory": theory, "paper": PAPER.get(cfg.figure, {}),
        "peak_test_acc": max([r.get("test_acc", 0.0) for r in history] + [final["test_acc"]]),
        "optimizer": cfg.optimizer, "epochs": history[-1]["epoch"] if history else 0,
        "steps": tr.steps,
        "network": "h" if cfg.layer_norm == "none" else f"h* ({cfg.layer_norm} LayerNorm)",
    }
    gaps = {}
    for key, ref in (("word_norm_mean", "word_norm"), ("u_norm_mean", "u_norm"),
                     ("train_objective", "objective")):
        if isinstance(theory.get(ref), float) and theory[ref]:
            gaps[key] = (out[key] - theory[ref]) / theory[ref]
    out["theory_rel_gap"] = gaps
    return out


EXPERIMENT = Experiment(
    name="feature-collapse",
    description="Feature Collapse (ICLR 2024): networks h / h* on the concept-word sentence task; "
                "Fig. 3, K=50, Fig. 4a-c, no weight decay, learnable LayerNorm",
    config_cls=FCConfig,
    run=run,
    presets=PRESETS,
    default_preset="fig3-quick",
)
