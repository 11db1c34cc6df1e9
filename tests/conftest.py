"""Shared test settings: hypothesis profiles sized for CI's two cores."""

from hypothesis import settings

settings.register_profile("ci", deadline=None, max_examples=30, derandomize=True)
settings.load_profile("ci")
