"""Figure helpers for the experiments (matplotlib, loaded lazily): :mod:`.figures`. The reports
of ``nclab reproduce`` are :mod:`nclab.reproduce.reports`; tables are in :mod:`nclab.tables`."""
