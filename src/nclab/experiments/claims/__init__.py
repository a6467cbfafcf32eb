"""One module per paper, each defining ``CLAIMS: list[Claim]`` (see :mod:`nclab.experiments.registry`)."""
