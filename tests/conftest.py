import os

import pytest
import torch

os.environ.setdefault("NCLAB_PROGRESS", "0")
# every test problem is small: one intra-op thread is faster, and immune to a busy machine
torch.set_num_threads(1)


@pytest.fixture
def rng():
    return torch.Generator().manual_seed(1234)
