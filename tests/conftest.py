"""Test-wide settings: property tests are derandomized so every run checks the same cases."""

from hypothesis import settings

settings.register_profile("deterministic", derandomize=True, deadline=None)
settings.load_profile("deterministic")
