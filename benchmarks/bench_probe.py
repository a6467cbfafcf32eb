"""Benchmark: layer-wise probing of the 9-layer MLP (5 nonlinear + 4 linear layers, Jacot et al.
2025) over MNIST-1D's 4000 training samples — nclab's streaming probe against the plain way.

Ours (``nclab.experiments.linear_head.measure.measure_layers``, what the ``linear-head`` experiment
runs every few epochs): one pass of a :class:`~nclab.CollapseProbe` on Z_2 .. Z_9 streaming
500-sample batches into float64 :class:`~nclab.ClassStats` (``scatter="none"``: ``nc1_trace`` needs
only the per-class sums of squares; ``nc3_cos`` of Z_8 with W_9 accumulated in the same pass), and
float64 Gram matrices of the nonlinear pre-activations (:class:`~nclab.metrics.NegativityStats`) for
negativity. Balancedness (a function of the weights only, the same code in both) is not timed.

Reference (same process, same model, same batches): forward hooks append every layer's output and
pre-activation to Python lists; after the pass they are concatenated and the metrics computed in
float32 from the full matrices: class means, tr Sigma_W / tr Sigma_B, kappa of the class means,
mean cosine with W_9, ``torch.linalg.matrix_norm(., 2)`` of Z and Z - relu(Z).

Time: best of ``--repeats`` runs in this process, with the default allocator. Peak memory: in a
fresh process per implementation, the resident set sampled every 0.2 ms by a thread during one run,
above its level just before (there malloc is told to return freed memory to the system, which would
distort the timing if done here). Agreement: largest relative difference of the metrics.

Usage: python benchmarks/bench_probe.py [--repeats 3] [--width 256] [--threads 1] [--smoke]
``--smoke``: width 16 on 500 samples (MNIST-1D generated at 625), one repeat: seconds, to check the
script runs (``tests/test_benchmarks.py``); its timings mean nothing. The last line of output is one JSON object with ``time_ratio`` (reference / ours, target >= 3) and
``memory_ratio`` (ours / reference, target <= 0.2).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from _peak_rss import peak_rss_bytes
from nclab.data.real import mnist1d
from nclab.experiments.linear_head.measure import measure_layers
from nclab.models.mlp import LinearHeadMLP

BATCH = 500
#: MNIST-1D's standard data set (a 4000 / 1000 split of 5000 samples)
MNIST1D_SAMPLES = 5000
FIRST = 2  # the first two layers are the backbone (the paper's Fig. 1)


# --------------------------------------------------------------------------------------------------
# memory: peak resident set of a fresh process running one implementation
# --------------------------------------------------------------------------------------------------


def peak_memory(name: str, width: int, threads: int, samples: int = MNIST1D_SAMPLES) -> int:
    """Bytes by which the resident set of a fresh Python process grows while ``name`` runs once.

    The child builds the same model and batches, runs the implementation on one batch (warm-up),
    then samples its resident set every 0.2 ms from a thread during the full pass; glibc is told to
    return freed blocks above 64 KiB to the system, so the resident set follows the live memory.
    Separate processes keep the implementations' allocator states apart and leave the timing
    process with the default allocator.
    """
    setup = (
        "import sys, torch\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
        "import bench_probe as b\n"
        f"torch.set_num_threads({threads})\n"
        f"model, loader, k = b.setup({width}, samples={samples})\n"
        f"fn = b.{name}\n"
        "fn(model, loader[:1], k)\n"
    )
    return peak_rss_bytes(setup, "fn(model, loader, k)")


# --------------------------------------------------------------------------------------------------
# the two implementations
# --------------------------------------------------------------------------------------------------


def ours(model: LinearHeadMLP, loader, k: int) -> dict[str, dict[str, float | None]]:
    return measure_layers(model, loader, k, first=FIRST, weights=False)["layers"]


@torch.no_grad()
def reference(model: LinearHeadMLP, loader, k: int) -> dict[str, dict[str, float | None]]:
    L, L1 = model.L, model.L1
    outs: dict[int, list[torch.Tensor]] = {ell: [] for ell in range(FIRST, L + 1)}
    pres: dict[int, list[torch.Tensor]] = {ell: [] for ell in range(FIRST, L1 + 1)}
    handles = []
    for ell in outs:
        handles.append(
            model.layers[ell - 1].register_forward_hook(
                lambda m, i, o, ell=ell: outs[ell].append(o.detach())
            )
        )
    for ell in pres:
        handles.append(
            model.layers[ell - 1].linear.register_forward_hook(
                lambda m, i, o, ell=ell: pres[ell].append(o.detach())
            )
        )
    ys = []
    model.eval()
    for x, y in loader:
        model(x)
        ys.append(y)
    for h in handles:
        h.remove()
    y = torch.cat(ys)
    ws = [w.detach() for w in model.weights()]
    res = {}
    for ell, parts in outs.items():
        h = torch.cat(parts)
        means = torch.stack([h[y == c].mean(0) for c in range(k)])
        tr_w = ((h - means[y]) ** 2).sum() / len(y)
        tr_b = ((means - means.mean(0)) ** 2).sum() / k
        s = torch.linalg.svdvals(means)
        rec = {
            "nc1_trace": float(tr_w / tr_b),
            "nc2_kappa": float(s[0] / s[-1]),
            "nc3_cos": None,
            "negativity": None,
        }
        if ell == L - 1:
            w = ws[L - 1][y]
            rec["nc3_cos"] = float((torch.nn.functional.cosine_similarity(h, w, dim=1)).mean())
        if ell in pres:
            z = torch.cat(pres[ell])
            rec["negativity"] = float(
                torch.linalg.matrix_norm(z - torch.relu(z), 2) / torch.linalg.matrix_norm(z, 2)
            )
        res[f"Z{ell}"] = rec
    return res


def max_rel_diff(a, b) -> float:
    worst = 0.0
    for layer, ra in a.items():
        for key in ("nc1_trace", "nc2_kappa", "nc3_cos", "negativity"):
            va, vb = ra.get(key), b[layer].get(key)
            if va is None or vb is None:
                assert va is None and vb is None, (layer, key, va, vb)
                continue
            worst = max(worst, abs(va - vb) / max(abs(vb), 1e-12))
    return worst


def setup(width: int, train_epochs: int = 0, samples: int = MNIST1D_SAMPLES):
    """The 9-layer MLP (5 nonlinear + 4 linear layers) and MNIST-1D's training set in batches
    (80 % of ``samples``)."""
    data = mnist1d(seed=0, num_samples=samples)
    k = data.num_classes
    torch.manual_seed(0)
    model = LinearHeadMLP(data.x_train.shape[1], k, [width] * 5, [width] * 3)
    if train_epochs:
        opt = torch.optim.Adam(model.parameters(), 1e-3, weight_decay=5e-4)
        onehot = torch.nn.functional.one_hot(data.y_train, k).float()
        for _ in range(train_epochs):
            for i in range(0, len(data.y_train), 100):
                loss = ((model(data.x_train[i : i + 100]) - onehot[i : i + 100]) ** 2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
    loader = [
        (data.x_train[i : i + BATCH], data.y_train[i : i + BATCH])
        for i in range(0, len(data.y_train), BATCH)
    ]
    return model, loader, k


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--train-epochs",
        type=int,
        default=0,
        help="train the network briefly first (Adam, wd 5e-4), as mid-training",
    )
    ap.add_argument(
        "--smoke", action="store_true", help="a tiny network and data set: checks the script runs"
    )
    args = ap.parse_args()
    samples = MNIST1D_SAMPLES
    if args.smoke:
        args.repeats, args.width, samples = 1, 16, 625
    torch.set_num_threads(args.threads)
    model, loader, k = setup(args.width, args.train_epochs, samples)
    n = sum(len(y) for _, y in loader)
    ours(model, loader[:1], k)  # warm up both code paths
    reference(model, loader[:1], k)
    times: dict[str, list[float]] = {"ours": [], "reference": []}
    results = {}
    for _ in range(args.repeats):
        for name, fn in (("reference", reference), ("ours", ours)):
            t0 = time.perf_counter()
            results[name] = fn(model, loader, k)
            times[name].append(time.perf_counter() - t0)
    t_ours, t_ref = min(times["ours"]), min(times["reference"])
    m_ours = peak_memory("ours", args.width, args.threads, samples)
    m_ref = peak_memory("reference", args.width, args.threads, samples)
    diff = max_rel_diff(results["ours"], results["reference"])
    print(
        f"9-layer MLP (5 nonlinear + 4 linear, width {args.width}), MNIST-1D N={n},"
        f" layers Z{FIRST}..Z9, batches of {BATCH}, {args.threads} thread(s)"
    )
    print(f"  ours:      {t_ours * 1e3:8.1f} ms   peak +{m_ours / 2**20:7.1f} MiB")
    print(f"  reference: {t_ref * 1e3:8.1f} ms   peak +{m_ref / 2**20:7.1f} MiB")
    print(
        f"  time ratio (reference / ours) {t_ref / t_ours:.2f}, memory ratio (ours / reference) "
        f"{m_ours / max(m_ref, 1):.3f}, max relative difference of the metrics {diff:.2e}"
    )
    print(
        json.dumps(
            {
                "benchmark": "bench_probe",
                "n": n,
                "width": args.width,
                "threads": args.threads,
                "ours_s": t_ours,
                "reference_s": t_ref,
                "ours_peak_bytes": m_ours,
                "reference_peak_bytes": m_ref,
                "time_ratio": t_ref / t_ours,
                "memory_ratio": m_ours / max(m_ref, 1),
                "max_rel_diff": diff,
                "times": times,
            }
        )
    )


if __name__ == "__main__":
    main()
