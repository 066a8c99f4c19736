"""Defaults shared by the library and every command, in a module with no heavy imports (``--help`` stays fast)."""

DEFAULT_N_BOOT = 1000
"""Bootstrap resamples wherever relgrade bootstraps (calibrate, rank-systems)."""

__all__ = ["DEFAULT_N_BOOT"]
