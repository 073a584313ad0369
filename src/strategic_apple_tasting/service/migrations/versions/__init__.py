"""One file per schema version; never edit a released one, add the next."""
