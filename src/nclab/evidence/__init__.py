"""The evidence behind the verdicts: a ledger of recorded runs with their provenance
(:mod:`.ledger`), committed beside the code, and where the runs still going stand
(:mod:`.progress`)."""

from .ledger import Ledger, Record, compact, default_root, existing_root, record_of
from .progress import (
    progress_of,
    progress_words,
    record_running,
    restore_running,
    running,
    running_entry,
)

__all__ = [
    "Ledger",
    "Record",
    "compact",
    "default_root",
    "existing_root",
    "progress_of",
    "progress_words",
    "record_of",
    "record_running",
    "restore_running",
    "running",
    "running_entry",
]
