"""Theorem 3.1 of Jacot, Súkeník, Wang & Mondelli (ICLR 2025): the public import path.

The bounds (one function per bound, their validation and :func:`jacot_bounds`, the CLI's
``jacot-bounds``) live in :mod:`nclab.theory.bounds_theorem`, whose docstring states the theorem;
the certificate of a trained network (:func:`jacot_certificate`) in
:mod:`nclab.theory.bounds_certificate`, which imports the former. This module re-exports both and
defines nothing (its ``__all__`` is theirs, so a name added there is exported here too), so the
imports run one way: bounds -> bounds_certificate -> bounds_theorem.

>>> b = jacot_bounds(eps1=0.1, eps2=0.0, r=2.0, K=4, N=400, n_penult=16, c3=8.0, L2=3, z_op=20.0)
>>> b.applies, b.kappa_wl_bound
(True, 2.0)
"""

from __future__ import annotations

from . import bounds_certificate, bounds_theorem
from .bounds_certificate import *  # noqa: F403
from .bounds_theorem import *  # noqa: F403

__all__: list[str] = []
__all__ += bounds_theorem.__all__  # the forms type checkers read as re-exports
__all__ += bounds_certificate.__all__
