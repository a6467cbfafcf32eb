"""A plain float64 numpy reference of the canonical metrics (DESIGN.md), for the tests."""

from __future__ import annotations

import numpy as np


def stats(h: np.ndarray, y: np.ndarray, k: int, sample_mean: bool = False):
    h = np.asarray(h, dtype=np.float64)
    n, d = h.shape
    mu = np.stack([h[y == c].mean(0) for c in range(k)])
    mg = h.mean(0) if sample_mean else mu.mean(0)
    dev = h - mu[y]
    sw = dev.T @ dev / n
    m = (mu - mg).T  # D x K
    sb = m @ m.T / k
    return mu, mg, m, sw, sb


def etf(a):
    g = a @ a.T
    k = a.shape[0]
    return np.linalg.norm(g / np.linalg.norm(g) - (np.eye(k) - 1 / k) / np.sqrt(k - 1))


def of(a):
    g = a @ a.T
    k = a.shape[0]
    return np.linalg.norm(g / np.linalg.norm(g) - np.eye(k) / np.sqrt(k))


def metrics(h, y, k, w=None, b=None, sample_mean=False):
    h = np.asarray(h, dtype=np.float64)
    mu, mg, m, sw, sb = stats(h, y, k, sample_mean)
    out = {}
    out["nc1"] = np.trace(sw @ np.linalg.pinv(sb, rcond=1e-10, hermitian=True)) / k
    out["nc1_trace"] = np.trace(sw) / np.trace(sb)
    var = np.array([((h[y == c] - mu[c]) ** 2).sum(1).mean() for c in range(k)])
    vals = []
    for c in range(k):
        for c2 in range(k):
            if c != c2:
                vals.append((var[c] + var[c2]) / (2 * ((mu[c] - mu[c2]) ** 2).sum()))
    out["cdnv"] = float(np.mean(vals))
    out["nc2_etf"] = etf(m.T)
    out["nc2_of"] = of(mu)
    sv = np.linalg.svd(mu, compute_uv=False)
    if mu.shape[1] >= k:
        out["nc2_kappa"] = sv[0] / sv[k - 1]
    norms = np.linalg.norm(m, axis=0)
    out["nc2_equinorm"] = norms.std() / norms.mean()
    u = m / norms
    cos = u.T @ u
    out["nc2_equiangle"] = cos[np.triu_indices(k, 1)].std()
    dist = ((h[:, None, :] - mu[None]) ** 2).sum(-1)
    ncc = dist.argmin(1)
    out["ncc_acc"] = float((ncc == y).mean())
    if w is not None:
        w = np.asarray(w, dtype=np.float64)
        out["nc2_w_etf"] = etf(w)
        out["nc2_w_of"] = of(w)
        out["nc3"] = np.linalg.norm(w / np.linalg.norm(w) - m.T / np.linalg.norm(m)) ** 2
        out["nc3_of"] = np.linalg.norm(w / np.linalg.norm(w) - mu / np.linalg.norm(mu))
        cos_i = (h * w[y]).sum(1) / (np.linalg.norm(h, axis=1) * np.linalg.norm(w[y], axis=1))
        out["nc3_cos"] = cos_i.mean()
        logits = h @ w.T + (0 if b is None else np.asarray(b, dtype=np.float64))
        pred = logits.argmax(1)
        out["nc4"] = float((pred != ncc).mean())
        out["acc"] = float((pred == y).mean())
    return {k2: float(v) for k2, v in out.items()}
