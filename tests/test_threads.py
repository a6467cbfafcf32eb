"""A run's thread setting reaches torch and numpy's BLAS, and is restored after."""

import numpy as np
import torch
from threadpoolctl import threadpool_info

from nclab.threads import run_threads


def _blas_threads() -> list[int]:
    return [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]


def test_run_threads_limits_torch_and_blas_then_restores():
    np.dot(np.ones((4, 4)), np.ones((4, 4)))  # numpy's BLAS is loaded
    before_torch, before_blas = torch.get_num_threads(), _blas_threads()
    assert before_blas, "no BLAS library seen by threadpoolctl"
    with run_threads(1):
        assert torch.get_num_threads() == 1
        assert set(_blas_threads()) == {1}
    assert torch.get_num_threads() == before_torch
    assert _blas_threads() == before_blas


def test_run_threads_none_leaves_everything():
    before = torch.get_num_threads(), _blas_threads()
    with run_threads(None):
        assert (torch.get_num_threads(), _blas_threads()) == before
