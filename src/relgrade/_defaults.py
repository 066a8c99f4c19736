"""Defaults shared by the library and every command, in a module with no heavy imports (``--help`` stays fast)."""

DEFAULT_N_BOOT = 1000
"""Bootstrap resamples wherever relgrade bootstraps (calibrate, rank-systems)."""

PREDICTIONS = ("soft", "hard")
"""How the judges predict each query's metric for PPI (relgrade.hybrid.predict): calibrated soft, or hard grades."""
DEFAULT_PREDICTION = "soft"
"""The prediction of estimate, compare with labels and rank-systems."""
DEFAULT_FOLDS = 5
"""Folds of the soft prediction's cross-fit over the human-labeled queries (fewer when fewer queries are labeled)."""

__all__ = ["DEFAULT_FOLDS", "DEFAULT_N_BOOT", "DEFAULT_PREDICTION", "PREDICTIONS"]
