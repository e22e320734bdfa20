"""Hypothesis strategies for applications' own property tests (needs `hypothesis`)."""

from .strategies import formulas, values

__all__ = ["formulas", "values"]
