"""Golden sets versioned with the corpus: corpus fingerprints, the golden-set check and text-hash stamps."""

from relgrade.versioning._check import GoldenCheck, check_golden, corpus_fingerprint, stamp_golden

__all__ = ["GoldenCheck", "check_golden", "corpus_fingerprint", "stamp_golden"]
