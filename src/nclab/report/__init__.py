"""Figures (matplotlib, loaded lazily) and the reports of ``nclab reproduce``; tables are in :mod:`nclab.tables`."""
