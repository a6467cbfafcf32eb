"""Benchmark: nclab.curvature against the plain ways of computing the NTK's operator norm and the
top Hessian eigenvalue, on an MLP small enough for the dense Jacobian to fit.

Problem: a ReLU MLP d -> w -> w -> K (biases), N random Gaussian inputs, random one-hot targets,
mean-squared error (``nn.MSELoss``); float32 by default.

NTK, ||Theta||_op with Theta = J J^T (J: NK x P):
- ours: ``ntk_operator_norm`` (Lanczos on A -> J(J^T A), one vjp and one jvp per step, J never
  formed), and the same with ``method="power"`` (power iteration);
- plain: the dense Jacobian by ``torch.func.jacrev`` (NK x P), Theta = J J^T, ``eigvalsh``.

Hessian, top eigenvalue of the loss Hessian:
- ours: ``hessian_top_eigenvalue`` (Lanczos on Hessian-vector products, the default), and with
  ``method="power"``;
- plain: power iteration with an autograd double backward per vector (``create_graph=True`` once,
  then ``torch.autograd.grad(g, params, v, retain_graph=True)``), the usual recipe.

All iterations stop at the same relative residual (``--tol``). Time: best of ``--repeats`` runs in
this process after a warm-up. Peak memory: in a fresh process per implementation, the resident set
sampled every 0.2 ms during one run above its level just before (on CUDA: the peak of
``torch.cuda.max_memory_allocated`` above the level before). Agreement: relative difference to the
dense NTK and to the plain Hessian value.

Usage: python benchmarks/bench_curvature.py [--smoke] [--repeats 3] [--device cuda] [--threads 1]
``--smoke`` (or ``--quick``): a tiny MLP, one repeat, and the peak memory of the power-iteration
variants left out (null: the same functions as the Lanczos ones, another ``method``; a fresh
process costs seconds): seconds, to check the script runs (``tests/test_benchmarks.py``); its
timings mean nothing. The last line of output is one JSON object with every figure (``ntk_time_ratio`` = plain / ours,
``ntk_memory_ratio`` = ours / plain, the same for ``hessian_*``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from torch import nn

from _peak_rss import peak_rss_bytes
from nclab.curvature import hessian_top_eigenvalue, ntk_operator_norm

SIZES = {"full": dict(n=512, d=64, w=128, k=10), "smoke": dict(n=48, d=12, w=24, k=4)}
TOL, MAX_ITER = 1e-4, 1000


def setup(size: str, device: str = "cpu", dtype: str = "float32"):
    s = SIZES[size]
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(s["d"], s["w"]), nn.ReLU(), nn.Linear(s["w"], s["w"]), nn.ReLU()
    )
    model.append(nn.Linear(s["w"], s["k"]))
    model = model.to(device=device, dtype=getattr(torch, dtype))
    g = torch.Generator().manual_seed(1)
    x = torch.randn(s["n"], s["d"], generator=g).to(device=device, dtype=getattr(torch, dtype))
    labels = torch.randint(0, s["k"], (s["n"],), generator=g)
    y = nn.functional.one_hot(labels, s["k"]).to(device=device, dtype=x.dtype)
    return model, x, y


# --------------------------------------------------------------------------------------------------
# the implementations: (model, x, y) -> value
# --------------------------------------------------------------------------------------------------


def ntk_ours(model, x, y):
    return ntk_operator_norm(model, x, tol=TOL, max_iter=MAX_ITER).value


def ntk_ours_power(model, x, y):
    return ntk_operator_norm(model, x, method="power", tol=TOL, max_iter=MAX_ITER).value


def ntk_dense(model, x, y):
    params = {k: p.detach() for k, p in model.named_parameters()}
    jac = torch.func.jacrev(lambda p: torch.func.functional_call(model, p, (x,)))(params)
    rows = x.shape[0] * y.shape[1]
    j = torch.cat([t.reshape(rows, -1) for t in jac.values()], dim=1)  # NK x P
    return float(torch.linalg.eigvalsh(j @ j.T)[-1])


def hessian_ours(model, x, y):
    return hessian_top_eigenvalue(model, nn.MSELoss(), (x, y), tol=TOL, max_iter=MAX_ITER).value


def hessian_ours_power(model, x, y):
    return hessian_top_eigenvalue(
        model, nn.MSELoss(), (x, y), method="power", tol=TOL, max_iter=MAX_ITER
    ).value


def hessian_plain(model, x, y):
    """Power iteration, one autograd double backward per vector."""
    params = list(model.parameters())
    loss = nn.MSELoss()(model(x), y)
    grads = torch.autograd.grad(loss, params, create_graph=True)
    g = torch.Generator().manual_seed(0)
    v = [torch.randn(p.shape, generator=g).to(p) for p in params]
    norm = torch.sqrt(sum((t * t).sum() for t in v))
    v = [t / norm for t in v]
    value = 0.0
    for _ in range(MAX_ITER):
        hv = torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True)
        value = float(sum((a * b).sum() for a, b in zip(v, hv, strict=True)))
        resid = torch.sqrt(sum(((h - value * a) ** 2).sum() for a, h in zip(v, hv, strict=True)))
        if float(resid) <= TOL * abs(value):
            break
        norm = torch.sqrt(sum((h * h).sum() for h in hv))
        v = [h.detach() / norm for h in hv]
    return value


# --------------------------------------------------------------------------------------------------
# timing and memory
# --------------------------------------------------------------------------------------------------


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def best_time(fn, args, repeats: int, device: str):
    fn(*args)  # warm-up
    best, val = float("inf"), None
    for _ in range(repeats):
        sync(device)
        t = time.perf_counter()
        val = fn(*args)
        sync(device)
        best = min(best, time.perf_counter() - t)
    return best, val


def peak_memory(name: str, size: str, device: str, dtype: str, threads: int) -> int:
    """Bytes by which a fresh process's resident set (CPU) or allocated CUDA memory grows while
    ``name`` runs once (after a warm-up run)."""
    setup = (
        "import sys, torch\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
        "import bench_curvature as b\n"
        f"torch.set_num_threads({threads})\n"
        f"args = b.setup({size!r}, {device!r}, {dtype!r}); fn = b.{name}\n"
        "fn(*args)\n"
        f"if {device!r}.startswith('cuda'):\n"
        "    torch.cuda.synchronize(); base = torch.cuda.memory_allocated()\n"
        "    torch.cuda.reset_peak_memory_stats(); fn(*args); torch.cuda.synchronize()\n"
        "    print(torch.cuda.max_memory_allocated() - base); sys.exit()\n"
    )
    return peak_rss_bytes(setup, "fn(*args)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--smoke", "--quick", action="store_true", help="a tiny problem: checks the script runs"
    )
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.smoke:
        args.repeats = 1
    size = "smoke" if args.smoke else "full"
    problem = setup(size, args.device, args.dtype)
    n_params = sum(p.numel() for p in problem[0].parameters())
    s = SIZES[size]
    out: dict[str, float | int | str | None] = {"benchmark": "bench_curvature", "size": size, **s}
    out |= {"params": n_params, "device": args.device, "dtype": args.dtype, "tol": TOL}
    out["threads"] = args.threads
    out["dense_jacobian_bytes"] = s["n"] * s["k"] * n_params * problem[1].element_size()
    names = ["ntk_ours", "ntk_ours_power", "ntk_dense"]
    names += ["hessian_ours", "hessian_ours_power", "hessian_plain"]
    for name in names:
        t, v = best_time(globals()[name], problem, args.repeats, args.device)
        m = None
        if not (args.smoke and name.endswith("_power")):
            m = peak_memory(name, size, args.device, args.dtype, args.threads)
        out |= {f"{name}_s": t, f"{name}_value": v, f"{name}_peak_bytes": m}
        peak = "not measured" if m is None else f"+{m / 2**20:8.1f} MiB"
        print(f"  {name:20s} {t * 1e3:9.1f} ms  peak {peak}  value {v:.6g}")
    for what, ours, plain in (
        ("ntk", "ntk_ours", "ntk_dense"),
        ("hessian", "hessian_ours", "hessian_plain"),
    ):
        out[f"{what}_time_ratio"] = out[f"{plain}_s"] / out[f"{ours}_s"]
        out[f"{what}_memory_ratio"] = out[f"{ours}_peak_bytes"] / max(out[f"{plain}_peak_bytes"], 1)
        out[f"{what}_rel_diff"] = abs(out[f"{ours}_value"] / out[f"{plain}_value"] - 1)
        print(
            f"  {what}: time ratio (plain / ours) {out[f'{what}_time_ratio']:.2f}, memory ratio "
            f"(ours / plain) {out[f'{what}_memory_ratio']:.3f}, relative difference "
            f"{out[f'{what}_rel_diff']:.1e}"
        )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
