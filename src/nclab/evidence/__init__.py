"""The evidence behind the verdicts: a ledger of recorded runs with their provenance
(:mod:`.ledger`), committed beside the code."""

from .ledger import Ledger, Record, compact, default_root, record_of

__all__ = ["Ledger", "Record", "compact", "default_root", "record_of"]
