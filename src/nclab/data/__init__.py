"""Data: synthetic models (sentences, mixtures) and real data sets (bundled, generated or from files)."""
