"""Tables (rich) and figures (matplotlib, loaded lazily) of results."""
