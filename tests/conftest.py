import os

import pytest
import torch

os.environ.setdefault("NCLAB_PROGRESS", "0")
torch.set_num_threads(max(1, min(2, torch.get_num_threads())))


@pytest.fixture
def rng():
    return torch.Generator().manual_seed(1234)
