"""Experiments: storage of results (sweeps and executors come on top of this)."""

from .storage import read_table, write_table

__all__ = ["read_table", "write_table"]
