"""A fingerprint of the human labels a mapping was fitted on, to tell when PPI would reuse them.

Prediction-powered inference is valid only when the judge's predictions on the human-labeled
queries do not depend on those queries' human labels (Angelopoulos et al. 2023). A mapping fitted on
the same labels breaks that; :func:`relgrade.calibration.crossfit_mapping` repairs it. To detect the
reuse without copying the labels into the mapping's JSON, the fingerprint keeps

* ``pairs_sha256``: SHA-256 of the sorted ``(query_id, doc_id)`` pairs (JSON-encoded), so two fits
  on exactly the same pairs are recognised;
* ``queries``: the first 16 hex digits of SHA-256 of each query id (prefixed, sorted), so any
  overlap at the level PPI works on (queries) is found: :meth:`LabelFingerprint.overlap`.

Ids are compared as strings, exactly (``NA`` is an id like any other).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

_PREFIX = "relgrade-query\0"


def query_hash(query_id: str) -> str:
    """First 16 hex digits of SHA-256 of the (prefixed) query id."""
    return hashlib.sha256((_PREFIX + str(query_id)).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class LabelFingerprint:
    """Which human labels a mapping saw: pair and query counts, a hash of the pairs, hashed query ids."""

    n_pairs: int
    n_queries: int
    pairs_sha256: str
    queries: tuple[str, ...]

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, str]]) -> "LabelFingerprint":
        keys = sorted({(str(q), str(d)) for q, d in pairs})
        digest = hashlib.sha256(json.dumps(keys, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        queries = tuple(sorted({query_hash(q) for q, _ in keys}))
        return cls(len(keys), len(queries), digest.hexdigest(), queries)

    def overlap(self, labels: Mapping[str, Any] | Iterable[str]) -> tuple[str, ...]:
        """The query ids of ``labels`` (``{query_id: ...}`` or ids) that the fingerprinted labels also cover."""
        seen = set(self.queries)
        return tuple(q for q in labels if query_hash(q) in seen)

    def to_dict(self) -> dict[str, Any]:
        return {"n_pairs": self.n_pairs, "n_queries": self.n_queries, "pairs_sha256": self.pairs_sha256,
                "query_sha256_16": list(self.queries)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "LabelFingerprint":
        return cls(int(data["n_pairs"]), int(data["n_queries"]), str(data["pairs_sha256"]),
                   tuple(str(h) for h in data["query_sha256_16"]))
