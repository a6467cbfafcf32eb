"""Benchmark: nclab's statistics + NC1 vs the plain float32 way public research code computes it.

Reference (in the same process): two passes over the features in float32 (class means, then the
pooled within-class covariance), Sigma_B from the centred means, and ``torch.linalg.pinv`` of the
D x D Sigma_B: NC1 = tr(Sigma_W pinv(Sigma_B)) / K.

Ours, all exact float64 arithmetic, then ``nclab.metrics.nc1`` (thin SVD of the K centred means, no
D x D pseudo-inverse):
- in-memory: ``ClassStats.from_features(x, y, decisions=False)`` (two passes over the tensor, the
  within-class scatter formed only in the span of the class means);
- streaming: ``update()`` over the same 1000-row batches as the reference, then the second pass
  ``decision_pass()`` over them (``scatter="subspace"``; the second pass also computes the
  nearest-centre decisions, which the reference does not);
- streaming, one pass: ``update()`` with the full D x D float64 scatter (``scatter="full"``), for
  data that can be read only once.

Cases: (a) N=20000, D=512, K=10; (b) N=20000, D=2048, K=100; (c) collapsed: class means offset by
1000, within-class std 1e-4, N=20000, D=512, K=10, stored as float32. Accuracy is the relative error
against a float64 value computed independently (eigendecomposition of the float64 Sigma_B).

Floor (``{case}_floor_s``): the least the in-memory path must do, one N x D x K float64 GEMM (the
projection on the class means' span, timed on features already in float64) and two reads of the
features; ``{case}_inmem_over_floor`` = in-memory time / floor (issue 28's target for (b): <= 1.5).

Usage: python benchmarks/bench_metrics.py [--repeats 3] [--smoke] [--device cuda]
(with ``--device`` both implementations run on that device, timed with its synchronisation).
``--smoke`` (or ``--quick``): the three cases at N=1000 with D and K shrunk ((a), (c): D=64, K=10;
(b): D=256, K=20), one repeat: seconds, to check the script runs (``tests/test_benchmarks.py``);
its timings mean nothing.
The last line of output is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from nclab import ClassStats
from nclab.metrics import nc1

BATCH = 1000


def make_case(name: str, n: int, d: int, k: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, k, (n,), generator=g)
    if name == "c":
        mu = 1000.0 + torch.randn(k, d, generator=g, dtype=torch.float64)
        x = mu[y] + 1e-4 * torch.randn(n, d, generator=g, dtype=torch.float64)
    else:
        mu = torch.randn(k, d, generator=g, dtype=torch.float64)
        x = mu[y] + torch.randn(n, d, generator=g, dtype=torch.float64)
    return x.float(), y


def reference_nc1(x: torch.Tensor, y: torch.Tensor, k: int) -> float:
    """The plain float32 recipe: two passes, pooled covariance, pinv of the D x D Sigma_B."""
    n, d = x.shape
    sums = torch.zeros(k, d, device=x.device)
    counts = torch.zeros(k, device=x.device)
    for i in range(0, n, BATCH):
        xb, yb = x[i : i + BATCH], y[i : i + BATCH]
        sums.index_add_(0, yb, xb)
        counts += torch.bincount(yb, minlength=k)
    mu = sums / counts[:, None]
    sw = torch.zeros(d, d, device=x.device)
    for i in range(0, n, BATCH):
        xb, yb = x[i : i + BATCH], y[i : i + BATCH]
        c = xb - mu[yb]
        sw += c.T @ c
    sw /= n
    m = mu - mu.mean(0)
    sb = m.T @ m / k
    return float(torch.trace(sw @ torch.linalg.pinv(sb))) / k


def exact_nc1(x: torch.Tensor, y: torch.Tensor, k: int) -> float:
    """float64 ground truth of the stored values, by a different route (eigh of Sigma_B)."""
    x = x.double()
    n, d = x.shape
    mu = torch.stack([x[y == c].mean(0) for c in range(k)])
    c = x - mu[y]
    sw = c.T @ c / n
    m = mu - mu.mean(0)
    sb = m.T @ m / k
    ev, vec = torch.linalg.eigh(sb)
    keep = ev > ev.max() * d * torch.finfo(torch.float64).eps * 10
    v = vec[:, keep]
    return float(((v.T @ sw @ v).diagonal() / ev[keep]).sum()) / k


def ours_in_memory(x, y, k):
    return nc1(ClassStats.from_features(x, y, num_classes=k, decisions=False))


def ours_streaming(x, y, k):
    s = ClassStats(k, x.shape[1], scatter="subspace")
    for i in range(0, x.shape[0], BATCH):
        s.update(x[i : i + BATCH], y[i : i + BATCH])
    for i in range(0, x.shape[0], BATCH):
        s.decision_pass(x[i : i + BATCH], y[i : i + BATCH])
    return nc1(s)


def ours_streaming_one_pass(x, y, k):
    s = ClassStats(k, x.shape[1], scatter="full")
    for i in range(0, x.shape[0], BATCH):
        s.update(x[i : i + BATCH], y[i : i + BATCH])
    return nc1(s)


def floor_time(x: torch.Tensor, k: int, repeats: int, device: str = "cpu") -> float:
    """The in-memory path's floor: one N x D x K float64 GEMM (its fastest form here: one call, or
    row blocks of 512 as the kernels run it; the features already in float64) and two reads of
    the features (``x.sum()``): the product nc1's projection needs and the two passes' reads."""
    xd = x.double()
    q = torch.linalg.qr(torch.randn(x.shape[1], k, dtype=torch.float64, device=x.device))[0]

    def blocks():
        for i in range(0, xd.shape[0], 512):
            xd[i : i + 512] @ q

    gemm = min(best_time(lambda: xd @ q, repeats, device)[0], best_time(blocks, repeats, device)[0])
    return gemm + 2 * best_time(lambda: x.sum(), repeats, device)[0]


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def best_time(fn, repeats, device="cpu"):
    best, val = float("inf"), None
    fn()  # warm-up (kernels, allocator)
    for _ in range(repeats):
        sync(device)
        t = time.perf_counter()
        val = fn()
        sync(device)
        best = min(best, time.perf_counter() - t)
    return best, val


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--smoke", "--quick", action="store_true", help="tiny cases: checks the script runs"
    )
    ap.add_argument("--device", default="cpu", help="where both implementations run")
    args = ap.parse_args()
    dev = args.device
    if args.smoke:
        args.repeats = 1
    n = 1000 if args.smoke else 20000
    cases = {"a": (n, 512, 10), "b": (n, 2048, 100), "c": (n, 512, 10)}
    if args.smoke:
        cases = {"a": (n, 64, 10), "b": (n, 256, 20), "c": (n, 64, 10)}
    out: dict[str, float | str] = {"threads": torch.get_num_threads(), "n": n, "device": dev}
    for name, (nn, d, k) in cases.items():
        x, y = make_case(name, nn, d, k)
        truth = exact_nc1(x, y, k)
        x, y = x.to(dev), y.to(dev)
        r = args.repeats
        t_ref, v_ref = best_time(lambda: reference_nc1(x, y, k), r, dev)  # noqa: B023
        t_mem, v_mem = best_time(lambda: ours_in_memory(x, y, k), r, dev)  # noqa: B023
        t_str, v_str = best_time(lambda: ours_streaming(x, y, k), r, dev)  # noqa: B023
        t_one, v_one = best_time(lambda: ours_streaming_one_pass(x, y, k), r, dev)  # noqa: B023
        t_floor = floor_time(x, k, r, dev)
        row = {
            f"{name}_ref_s": t_ref,
            f"{name}_inmem_s": t_mem,
            f"{name}_stream_s": t_str,
            f"{name}_stream1_s": t_one,
            f"{name}_ratio_inmem": t_ref / t_mem,
            f"{name}_ratio_stream": t_ref / t_str,
            f"{name}_ratio_stream1": t_ref / t_one,
            f"{name}_floor_s": t_floor,
            f"{name}_inmem_over_floor": t_mem / t_floor,
            f"{name}_nc1_exact": truth,
            f"{name}_relerr_ref": abs(v_ref - truth) / abs(truth),
            f"{name}_relerr_inmem": abs(v_mem - truth) / abs(truth),
            f"{name}_relerr_stream": abs(v_str - truth) / abs(truth),
            f"{name}_relerr_stream1": abs(v_one - truth) / abs(truth),
        }
        out.update(row)
        print(
            f"case ({name}) N={nn} D={d} K={k}: reference {t_ref:.3f}s, ours in-memory "
            f"{t_mem:.3f}s ({t_ref / t_mem:.1f}x), streaming {t_str:.3f}s ({t_ref / t_str:.1f}x), "
            f"one-pass {t_one:.3f}s ({t_ref / t_one:.1f}x); floor {t_floor:.3f}s (in-memory "
            f"{t_mem / t_floor:.2f}x it); "
            f"rel. error ref {row[f'{name}_relerr_ref']:.2e}, in-memory "
            f"{row[f'{name}_relerr_inmem']:.2e}, streaming {row[f'{name}_relerr_stream']:.2e}, "
            f"one-pass {row[f'{name}_relerr_stream1']:.2e}",
            flush=True,
        )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
