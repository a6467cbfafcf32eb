r"""The appendix of *Feature Collapse* evaluated: each lemma's identity or inequality computed at
points of an enumerated true risk (every sentence of every class with its probability), in the
convention of :mod:`nclab.theory.feature_collapse` (the network's own cross-entropy, weight decay
λ/2 on squared norms).

Notation (App. B): the paper's W is d×nw (column (α, β) = w_(α,β); nclab's embedding is its
transpose), Û_k = [u_k,1 … u_k,L] (d×L), Z_k the nc×L one-hot matrix of z_k, P and Q the nc×nw
partition and frequency matrices (P ζ(α,β) = e_α, Q ζ(α,β) = μ_β e_α), S_r(k) the latent
variables at Hamming distance r from z_k, N = {Σ_k Û_k = 0}, E the equimargin set (Definition B).

* :func:`lemma_b`: Lemma B (i)-(iii) on a latent set, θ_r and A_r fitted by least squares;
* :func:`assumption_b`: the solution space of the linear system (43) on symmetric matrices (its
  dimension is 2, span{I, 11ᵀ}, exactly when assumption B holds);
* :class:`Enumerated`: the true risk, the margins, N_{W,U}(r) (52), g (48) and ⟨Û, WQᵀZ⟩;
* :func:`type_i` / :func:`type_ii` / :func:`type_iii`: the collapse configurations;
* :func:`bilinear`: Lemma F / Claim A's bilinear problem (64)-(65) by its singular values;
* :func:`solve_system`: Theorem 2's system (7)-(8) = (150)-(151) from one start (log variables).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ...data.sentences import SentenceTask, enumerate_sentences
from ...models.wordnet import WordNet
from ...theory.feature_collapse import equiangular_frame, regularised_risk


def onehots(latents: torch.Tensor, nc: int) -> np.ndarray:
    """(K, L, nc) float64: entry [k, ℓ, α] = 1 if z_k,ℓ = α (Z_k transposed)."""
    z = np.asarray(latents, dtype=np.int64)
    return np.eye(nc)[z]


def distances(latents: torch.Tensor) -> np.ndarray:
    """(K, K) Hamming distances between the latent variables."""
    z = np.asarray(latents, dtype=np.int64)
    return (z[:, None, :] != z[None, :, :]).sum(-1)


def theta_closed(nc: int, L: int, r: int) -> float:
    """Lemma B (iii)'s θ_r for K = nc^L: nc r / ((nc - 1) L) (App. C.1, after (41))."""
    return nc * r / ((nc - 1) * L)


def lemma_b(latents: torch.Tensor, nc: int) -> dict[str, Any]:
    r"""Lemma B on ``latents``: (i) the spread of |S_r(k)| over k (0 when it holds); (ii) the
    largest entry of |(1/K) Σ_k Z_k - (1/nc) 11ᵀ| and of |ZZᵀ/(KL/nc) - I|; (iii) the mean
    value property Z_k - mean_{j ∈ S_r(k)} Z_j = θ_r Z_k + A_r fitted by least squares over k
    (θ_r a scalar, A_r a matrix): the largest residual relative to the largest left-hand side,
    and the largest relative gap of the fitted θ_r to nc r / ((nc-1) L)."""
    z1 = onehots(latents, nc)  # (K, L, nc)
    K, L = z1.shape[:2]
    dist = distances(latents)
    spread, resid, lhs_max, theta_gap = 0, 0.0, 0.0, 0.0
    for r in range(1, L + 1):
        members = dist == r
        sizes = members.sum(1)
        spread = max(spread, int(sizes.max() - sizes.min()))
        have = sizes > 0
        if have.sum() < 2:
            continue
        mean_j = (members[have].astype(float) @ z1.reshape(K, -1)) / sizes[have, None]
        lhs = z1[have].reshape(int(have.sum()), -1) - mean_j
        zc = z1[have].reshape(int(have.sum()), -1)
        lc, zcc = lhs - lhs.mean(0), zc - zc.mean(0)
        theta = float((lc * zcc).sum() / (zcc * zcc).sum())
        a_r = (lhs - theta * zc).mean(0)
        res = lhs - theta * zc - a_r
        resid = max(resid, float(np.abs(res).max()))
        lhs_max = max(lhs_max, float(np.abs(lhs).max()))
        theta_gap = max(theta_gap, abs(theta - theta_closed(nc, L, r)) / theta_closed(nc, L, r))
    mean_z = z1.mean(0)  # (L, nc): (1/K) Σ Z_k transposed
    zzt = np.einsum("kla,klb->ab", z1, z1)
    return {
        "K": K,
        "L": L,
        "sphere_size_spread": spread,
        "concept_balance_dev": float(np.abs(mean_z - 1.0 / nc).max() * nc),
        "zzt_dev": float(np.abs(zzt / (K * L / nc) - np.eye(nc)).max()),
        "mean_value_residual": resid / lhs_max if lhs_max > 0 else 0.0,
        "theta_rel_gap": theta_gap,
    }


def _sym_basis(nc: int) -> np.ndarray:
    """(nc(nc+1)/2, nc, nc): an orthonormal basis of the symmetric matrices."""
    out = []
    for a in range(nc):
        for b in range(a, nc):
            e = np.zeros((nc, nc))
            if a == b:
                e[a, a] = 1.0
            else:
                e[a, b] = e[b, a] = 1.0 / math.sqrt(2.0)
            out.append(e)
    return np.stack(out)


#: below this fraction of the largest eigenvalue, an eigenvalue of the scatter of (43) is zero:
#: the scatter is a sum of at most 10^6 products of small integers, exact in float64 to ~1e-13 of
#: its largest eigenvalue, so 1e-9 leaves four decades for rounding
NULL_TOL = 1e-9


def assumption_b(latents: torch.Tensor, nc: int, block: int = 250) -> dict[str, Any]:
    r"""The symmetric solutions A of (43): ⟨A, Γ(j,k) - Γ(j',k')⟩ = 0 whenever dist(z_j, z_k) =
    dist(z_j', z_k'), Γ(j,k) = Z_j (Z_j - Z_k)ᵀ. A symmetric A solves it iff it is orthogonal to
    every sym(Γ(j,k)) minus its distance class's mean, i.e. in the null space of the scatter
    Σ_r Σ_{dist(j,k)=r} (v - v̄_r)(v - v̄_r)ᵀ over v = sym(Γ(j,k)) in an orthonormal basis.
    I and 11ᵀ always solve it (⟨I, Γ(j,k)⟩ = dist, ⟨11ᵀ, Γ(j,k)⟩ = 0); assumption B (every PSD
    solution in span{I, 11ᵀ}) holds iff the null space is 2-dimensional (any other solution B
    gives the PSD solution B + tI outside the span). Returns the nullity, the third smallest
    eigenvalue over the largest (``gap``: above :data:`NULL_TOL` iff the nullity is 2), whether
    I and 11ᵀ are in the null space (``span_in_null``: a sanity check) and the pairs counted."""
    z1 = onehots(latents, nc)
    K, L = z1.shape[:2]
    basis = _sym_basis(nc)
    m = basis.shape[0]
    counts = z1.sum(1)  # (K, nc): Z_j Z_jᵀ = diag(counts_j)
    # per distance class: sum of v and of v vᵀ, accumulated in blocks of j
    sums = np.zeros((L + 1, m))
    sq = np.zeros((L + 1, m, m))
    n = np.zeros(L + 1)
    for start in range(0, K, block):
        zj = z1[start : start + block]
        cross = np.einsum("jla,klb->jkab", zj, z1)  # Z_j Z_kᵀ
        gam = -cross
        idx = np.arange(nc)
        gam[:, :, idx, idx] += counts[start : start + block, None, :]
        v = np.einsum("jkab,mab->jkm", gam, basis).reshape(-1, m)
        dist = (L - np.trace(cross, axis1=2, axis2=3)).astype(int).reshape(-1)
        for r in range(1, L + 1):
            sel = v[dist == r]
            if len(sel):
                sums[r] += sel.sum(0)
                sq[r] += sel.T @ sel
                n[r] += len(sel)
    scatter = np.zeros((m, m))
    for r in range(1, L + 1):
        if n[r]:
            scatter += sq[r] - np.outer(sums[r], sums[r]) / n[r]
    ev = np.linalg.eigvalsh(0.5 * (scatter + scatter.T))
    top = float(ev[-1])
    nullity = int((ev <= NULL_TOL * top).sum())
    coords = lambda a: np.einsum("ab,mab->m", a, basis)  # noqa: E731
    span = [coords(np.eye(nc)), coords(np.ones((nc, nc)))]
    in_null = max(float(s @ scatter @ s / (s @ s)) for s in span) / top
    return {
        "K": K,
        "L": L,
        "pairs": int(n.sum()),
        "nullity": nullity,
        "gap": float(ev[2] / top) if m > 2 else 0.0,
        "span_in_null": in_null,
        "holds": nullity == 2,
    }


class Enumerated:
    """The true risk of h (``layer_norm="none"``) or h* (``"fixed"``, LayerNorm without ε) on
    every sentence of ``task``, and the quantities of App. D in the paper's notation."""

    def __init__(self, task: SentenceTask, d: int, layer_norm: str = "none"):
        self.task, self.d = task, d
        self.nc, self.nw, self.L, self.K = task.nc, task.nw, task.L, task.K
        self.sc = task.sc
        self.x, self.y, prob = enumerate_sentences(task)
        self.p = prob.double()
        self.weights = self.p / self.K
        self.net = WordNet(
            self.nw, self.L, d, self.K, layer_norm=layer_norm, ln_eps=0.0, dtype=torch.float64
        )
        self.mu = task.mu.double()
        self.dist = torch.as_tensor(distances(task.latents))
        self.n_params = d * (self.nw + self.K * self.L)
        concept = task.word_concept
        self.P = torch.zeros(self.nc, self.nw, dtype=torch.float64)
        self.P[concept, torch.arange(self.nw)] = 1.0
        self.Q = self.P * self.mu[task.word_rank][None, :]

    def logits(self, W: torch.Tensor, U: torch.Tensor) -> torch.Tensor:
        """(sentences, K): the network's outputs; W (nw, d) embedding rows, U (K, L d)."""
        return torch.func.functional_call(self.net, {"emb.weight": W, "clf.weight": U}, (self.x,))

    def risk0(self, W: torch.Tensor, U: torch.Tensor) -> torch.Tensor:
        """R0 (44): (1/K) Σ_k E_{x ~ D_zk} cross-entropy."""
        ce = F.cross_entropy(self.logits(W, U), self.y, reduction="none")
        return (self.weights * ce).sum()

    def risk(self, W: torch.Tensor, U: torch.Tensor, lam_w: float, lam_u: float) -> torch.Tensor:
        return regularised_risk(self.risk0(W, U), W.pow(2).sum(), U.pow(2).sum(), lam_w, lam_u)

    def margins(self, W: torch.Tensor, U: torch.Tensor) -> torch.Tensor:
        """(sentences, K): M(x, j) = h(x)_k - h(x)_j for x of class k (Definition A)."""
        out = self.logits(W, U)
        return out.gather(1, self.y[:, None]) - out

    def averaged_margins(self, M: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(N(r) for r = 0..L (52), |S_r| for r = 0..L): the margin averaged over x ~ D_zk, the
        j ∈ S_r(k) and k (|S_r(k)| must not depend on k: Lemma B (i))."""
        d_to = self.dist[self.y]  # (sentences, K): dist(z_k, z_j)
        sizes = torch.stack([(self.dist[0] == r).sum() for r in range(self.L + 1)]).double()
        out = []
        for r in range(self.L + 1):
            mask = (d_to == r).double()
            out.append((self.weights[:, None] * M * mask).sum() / sizes[r])
        return torch.stack(out), sizes

    def equimargin_spread(self, M: torch.Tensor) -> float:
        """max over r of (max - min) of M(x, j) over x of positive probability and
        dist(z_k, z_j) = r, relative to max |M|: 0 exactly when (W, U) is in E."""
        d_to = self.dist[self.y]
        top = float(M.abs().max())
        spread = 0.0
        for r in range(1, self.L + 1):
            vals = M[(d_to == r) & (self.p[:, None] > 0)]
            if vals.numel():
                spread = max(spread, float(vals.max() - vals.min()))
        return spread / top if top > 0 else 0.0

    def bilinear(self, W: torch.Tensor, U: torch.Tensor) -> torch.Tensor:
        """⟨Û, W Qᵀ Z⟩_F = Σ_{k,ℓ} ⟨u_k,ℓ, (W Qᵀ)_{:, z_k,ℓ}⟩ (W here the (nw, d) rows)."""
        wq = self.Q @ W  # (nc, d): row α = Σ_β μ_β w_(α,β)
        blocks = U.view(self.K, self.L, self.d)
        return (blocks * wq[self.task.latents]).sum()

    def g(self, x: torch.Tensor) -> torch.Tensor:
        """g (48): log Σ_r |S_r| exp(-θ_r x / K) over r = 0..L (θ_0 = 0, |S_0| = 1), with the
        closed form θ_r of K = nc^L."""
        _, sizes = self.averaged_margins(torch.zeros(1, self.K, dtype=torch.float64))
        theta = torch.tensor(
            [theta_closed(self.nc, self.L, r) for r in range(self.L + 1)], dtype=torch.float64
        )
        return torch.logsumexp(torch.log(sizes) - theta.double() * x / self.K, 0)

    def mean_u_fraction(self, U: torch.Tensor) -> float:
        """‖Σ_k Û_k‖_F / (√K ‖Û‖_F): the share of Û's norm in the part common to every class
        (0 exactly on N; at most 1)."""
        blocks = U.view(self.K, self.L, self.d)
        top = float(U.norm())
        return float(blocks.sum(0).norm()) / (math.sqrt(self.K) * top) if top > 0 else 0.0


def frame(nc: int, d: int, mean_zero: bool, seed: int) -> torch.Tensor:
    """(nc, d): equiangular unit rows f_α (Definition D; ``mean_zero``: Definition F)."""
    return torch.as_tensor(equiangular_frame(nc, d, mean_zero=mean_zero, seed=seed)).T


def type_i(
    e: Enumerated, c: float, seed: int = 0, f: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """A point of Ω^I_c (63): w_(α,β) = c f_α, u_k,ℓ = c √(nw/(KL)) f_z_k,ℓ; with ``f`` (nc, d)
    rows of another F with ‖F‖_F² = nc, the point of B^I_c (66) it gives."""
    f = frame(e.nc, e.d, False, seed) if f is None else f
    W = c * f[e.task.word_concept]
    U = (c * math.sqrt(e.nw / (e.K * e.L)) * f[e.task.latents]).reshape(e.K, -1)
    return W, U


def type_ii(e: Enumerated, t: float, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """A point of Ω^II (App. F): φ(w_(α,β)) = √d f_α (f mean-zero), u_k,ℓ = c f_z_k,ℓ with
    ‖U‖_F = c √(KL) = t."""
    f = frame(e.nc, e.d, True, seed)
    W = f[e.task.word_concept].clone()
    U = (t / math.sqrt(e.K * e.L) * f[e.task.latents]).reshape(e.K, -1)
    return W, U


def type_iii(
    e: Enumerated, c: float, r: torch.Tensor, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """A type-III configuration (Definition E): w_(α,β) = r_β f_α, u_k,ℓ = c f_z_k,ℓ."""
    f = frame(e.nc, e.d, False, seed)
    W = r.double()[e.task.word_rank, None] * f[e.task.word_concept]
    U = (c * f[e.task.latents]).reshape(e.K, -1)
    return W, U


def bilinear(e: Enumerated, c: float = 1.0) -> dict[str, Any]:
    r"""Lemma F and Claim A (uniform words, Q = P / sc): the maximum of ⟨Û, W Pᵀ Z⟩ under
    ½(‖W‖² + ‖Û‖²) = c² nw is c² nw σ_max(Pᵀ Z) (a bilinear form on a sphere), reached exactly
    on the top singular pairs. Returns that maximum against Claim A's value c² sc √(KL nw) at a
    point of B^I_c, the multiplicity of σ_max (B^I_c has W = c F P: its maximisers span the nc
    rows of P, so the multiplicity is nc) and the largest principal-angle sine between the top
    right singular space and the row space of P."""
    Z = torch.as_tensor(onehots(e.task.latents, e.nc)).permute(2, 0, 1).reshape(e.nc, -1)  # nc×KL
    M = e.P.T @ Z  # (nw, KL): ⟨Û, W Pᵀ Z⟩ = ⟨W, Û (Pᵀ Z)ᵀ⟩ with W d×nw, Û d×KL
    s = torch.linalg.svdvals(M)
    top = float(s[0])
    mult = int((s >= top * (1 - 1e-12)).sum())
    u_left, _, _ = torch.linalg.svd(M)
    top_space = u_left[:, :mult]  # (nw, mult) in word space
    q_p, _ = torch.linalg.qr(e.P.T)
    sines = torch.linalg.svdvals(top_space - q_p @ (q_p.T @ top_space))
    maximum = c * c * e.nw * top
    # Claim A at a random point of B^I_c: F with ‖F‖_F² = nc
    gen = torch.Generator().manual_seed(0)
    Fm = torch.randn(e.d, e.nc, generator=gen, dtype=torch.float64)
    Fm *= math.sqrt(e.nc) / Fm.norm()
    W = (c * Fm @ e.P).T  # rows
    U = (c * math.sqrt(e.nw / (e.K * e.L)) * Fm.T[e.task.latents]).reshape(e.K, -1)
    value = float(e.bilinear(W, U)) * e.sc  # ⟨Û, W Pᵀ Z⟩ = sc ⟨Û, W Qᵀ Z⟩ (Q = P / sc)
    constraint = 0.5 * float(W.pow(2).sum() + U.pow(2).sum())
    claim_a = c * c * e.sc * math.sqrt(e.K * e.L * e.nw)
    return {
        "maximum": maximum,
        "claim_a_value": claim_a,
        "value_at_b": value,
        "max_rel_gap": abs(maximum - claim_a) / claim_a,
        "value_rel_gap": abs(value - claim_a) / claim_a,
        "constraint_rel_gap": abs(constraint - c * c * e.nw) / (c * c * e.nw),
        "multiplicity": mult,
        "nc": e.nc,
        "angle_sine": float(sines.max()) if sines.numel() else 0.0,
    }


def system_residual(x: np.ndarray, mu: np.ndarray, nc: int, L: int, lam: float) -> np.ndarray:
    r"""(150)-(151) in log form at x = (log c, log r_1..r_sc): log of (λ/L)(r_β/c)(nc - 1 +
    exp(nc/(nc-1) c r_β)) minus log μ_β, and log Σ_β (r_β/c)² minus log(L nc^(L-1))."""
    c, r = np.exp(x[0]), np.exp(x[1:])
    k = nc / (nc - 1)
    lhs = math.log(lam / L) + np.log(r) - math.log(c) + np.logaddexp(math.log(nc - 1), k * c * r)
    last = math.log(np.sum((r / c) ** 2)) - math.log(L * float(nc) ** (L - 1))
    return np.concatenate([lhs - np.log(mu), [last]])


def solve_system(
    x0: np.ndarray, mu: np.ndarray, nc: int, L: int, lam: float
) -> tuple[np.ndarray, float]:
    """One solve of (150)-(151) from ``x0`` (log variables): (c, r_1..r_sc) and the largest
    |residual| at the end (Levenberg-Marquardt to machine precision)."""
    from scipy.optimize import least_squares

    fit = least_squares(
        system_residual,
        x0,
        args=(mu, nc, L, lam),
        method="lm",
        xtol=1e-15,
        ftol=1e-15,
        gtol=1e-15,
        max_nfev=20_000,
    )
    return np.exp(fit.x), float(np.abs(system_residual(fit.x, mu, nc, L, lam)).max())
