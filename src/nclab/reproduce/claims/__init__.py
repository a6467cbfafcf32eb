"""One module per paper, each defining ``CLAIMS: list[Claim]`` (see :mod:`nclab.reproduce.registry`).

Modules are named after the paper's first author (``laurent`` is *Feature Collapse*); claim ids keep
the names the papers are known by (``feature-collapse/...``).
"""
