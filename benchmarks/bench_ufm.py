"""Benchmark: the batched UFM solver vs plain one-configuration-at-a-time autograd GD.

Problem (issue "Unconstrained-features laboratory"): the bias-free regularised-MSE UFM of Tirer &
Bruna, K=4, d=20, n=50, 64 configurations with lambda_W = lambda_H log-spaced in 10^-3.5..10^-2,
step 0.1, N(0,1) init, 2000 plain gradient-descent steps each, float64.

Reference (the way public research code does it), in the same process: for each configuration in
turn, ``W`` and ``H`` are leaf tensors, the objective is written out
(``0.5/N ||WH - Y||^2 + lambda/2 ||W||^2 + lambda/2 ||H||^2``), ``backward()`` and
``torch.optim.SGD`` (no momentum) take the step.

Ours: :class:`nclab.models.ufm.BatchedUFM` holding all 64 problems, one step for all of them. For
this model it runs GD in its exact class-structured form (:mod:`nclab.models.ufm_linear`: class
means plus within-class deviations E = P E_0, O(d^3) per step instead of three passes over the
d x N features); ``ours_generic`` is the general batched path (closed-form gradients, three
batched products over the features per step), reported beside it. All start from the same initial
point (each problem's ``torch.Generator`` seed), so their final objectives must agree (<= 1e-10
relative).

Throughput is configurations x steps per second. Both run on ``--threads`` CPU threads (default 1:
these products are far too small for intra-op parallelism to pay, see docs/ufm.md).

Usage: python benchmarks/bench_ufm.py [--configs 64] [--steps 2000] [--ref-configs 64]
       [--threads 1] [--device cpu] [--smoke]
``--smoke``: 4 configurations x 50 steps, seconds, to check the script runs
(``tests/test_benchmarks.py``); its timings mean nothing.
The last line of output is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from nclab.models.ufm import BatchedUFM, UFMSpec

K, D, N_PER = 4, 20, 50


def reference(lam: float, seed: int, steps: int, lr: float, device) -> float:
    """One configuration: autograd + SGD, the objective written out by hand."""
    n = K * N_PER
    g = torch.Generator().manual_seed(seed)
    h0 = torch.randn(D, n, generator=g, dtype=torch.float64)  # same draws as BatchedUFM
    w0 = torch.randn(K, D, generator=g, dtype=torch.float64)
    w = w0.to(device).requires_grad_()
    h = h0.to(device).requires_grad_()
    y = torch.kron(torch.eye(K, dtype=torch.float64), torch.ones(1, N_PER, dtype=torch.float64))
    y = y.to(device)
    opt = torch.optim.SGD([w, h], lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        loss = (
            0.5 / n * ((w @ h - y) ** 2).sum() + 0.5 * lam * (w**2).sum() + 0.5 * lam * (h**2).sum()
        )
        loss.backward()
        opt.step()
    with torch.no_grad():
        return float(
            0.5 / n * ((w @ h - y) ** 2).sum() + 0.5 * lam * (w**2).sum() + 0.5 * lam * (h**2).sum()
        )


def ours(
    lams, seeds, steps: int, lr: float, device, structured: bool = True
) -> tuple[list[float], float]:
    m = BatchedUFM(
        UFMSpec(K=K, n=N_PER, d=D),
        seeds=seeds,
        lambda_w=lams,
        lambda_h=lams,
        lr=lr,
        device=device,
        structured=structured,
    )
    sync(device)
    t = time.perf_counter()
    for _ in range(steps):
        m.step()
    sync(device)
    return m.objective().tolist(), time.perf_counter() - t


def sync(device) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", type=int, default=64)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument(
        "--ref-configs",
        type=int,
        default=None,
        help="run the reference on this many configurations (default: all)",
    )
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument(
        "--smoke", action="store_true", help="4 configurations x 50 steps: checks the script runs"
    )
    args = ap.parse_args()
    if args.smoke:
        args.configs, args.steps, args.ref_configs = 4, 50, None
    torch.set_num_threads(args.threads)
    lams = np.logspace(-3.5, -2, args.configs).tolist()
    seeds = list(range(args.configs))
    n_ref = args.ref_configs or args.configs
    ours(lams[:4], seeds[:4], 50, args.lr, args.device)  # warm-up
    reference(lams[0], 0, 50, args.lr, args.device)

    f_ours, t_ours = ours(lams, seeds, args.steps, args.lr, args.device)
    ours_rate = args.configs * args.steps / t_ours
    print(
        f"ours: {args.configs} configurations x {args.steps} steps in {t_ours:.2f} s "
        f"-> {ours_rate:,.0f} configuration-steps/s"
    )
    f_gen, t_gen = ours(lams, seeds, args.steps, args.lr, args.device, structured=False)
    gen_rate = args.configs * args.steps / t_gen
    print(f"ours, generic batched path: {t_gen:.2f} s -> {gen_rate:,.0f} configuration-steps/s")

    pick = np.linspace(0, args.configs - 1, n_ref).round().astype(int).tolist()
    t = time.perf_counter()
    f_ref = [reference(lams[i], seeds[i], args.steps, args.lr, args.device) for i in pick]
    sync(args.device)
    t_ref = time.perf_counter() - t
    ref_rate = n_ref * args.steps / t_ref
    print(
        f"reference (autograd, one configuration at a time): {n_ref} configurations x "
        f"{args.steps} steps in {t_ref:.2f} s -> {ref_rate:,.0f} configuration-steps/s"
    )
    diff = max(abs(f_ours[i] - r) / abs(r) for i, r in zip(pick, f_ref, strict=True))
    diff_gen = max(abs(f_gen[i] - r) / abs(r) for i, r in zip(pick, f_ref, strict=True))
    print(
        f"ratio {ours_rate / ref_rate:.1f}x (generic path {gen_rate / ref_rate:.1f}x); largest "
        f"relative difference of the final objectives {diff:.2e} (generic {diff_gen:.2e}, over "
        f"{n_ref} configurations)"
    )
    print(
        json.dumps(
            {
                "ratio": round(ours_rate / ref_rate, 2),
                "ours_steps_per_s": round(ours_rate, 1),
                "reference_steps_per_s": round(ref_rate, 1),
                "max_rel_objective_diff": diff,
                "objectives_agree": diff <= 1e-10 and diff_gen <= 1e-10,
                "ratio_generic": round(gen_rate / ref_rate, 2),
                "ours_generic_steps_per_s": round(gen_rate, 1),
                "max_rel_objective_diff_generic": diff_gen,
                "configs": args.configs,
                "reference_configs": n_ref,
                "steps": args.steps,
                "threads": args.threads,
                "device": args.device,
                "dtype": "float64",
                "ours_seconds": round(t_ours, 3),
                "reference_seconds": round(t_ref, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
