"""The package version, on the ground floor so any module may name it without importing the package face."""

__version__ = "0.1.0"
