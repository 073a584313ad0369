"""The ``sat`` command line (the top layer: it may import everything below it)."""
