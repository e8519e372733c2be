"""Bayesian tuning of heuristic parameters (scikit-optimize) and the store ``auto`` reads."""

from .bayes import TuningResult, tune
from .store import load_tuned, save_tuned

__all__ = ["TuningResult", "load_tuned", "save_tuned", "tune"]
