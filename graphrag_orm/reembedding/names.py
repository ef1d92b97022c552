"""The one stored name re-embedding adds to a chunk: the set id of its staged vector.

A leaf module (it imports nothing of the toolkit), so the health checks can read the
marker without importing the re-embedding services.
"""

from __future__ import annotations

__all__ = ["STAGED_SET_PROPERTY"]

STAGED_SET_PROPERTY = "stagedEmbeddingSetId"
"""The chunk property that names the embedding set of the vector under the staging property.

Backfill writes it with each staged vector; ``complete()`` moves it into ``embeddingSetId``
and removes it. While a chunk carries it, the health report's ``mixed-embedding-sets``
counts the chunk (a second set's vector is stored beside the live one).
"""
