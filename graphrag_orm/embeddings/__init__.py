"""Embedders, embedding sets and the checks every vector passes before it is written.

``HashingEmbedder`` is an offline stand-in (feature hashing, not a semantic
model); ``LocalEmbedder`` runs a real model (all-MiniLM-L6-v2) on this CPU, offline,
with the ``local`` extra (its heavy imports wait until one is built);
``OpenAIEmbedder`` calls any OpenAI-compatible endpoint and never retries on its
own (wrap calls in :class:`graphrag_orm.retry.RetryPolicy`). docs/embeddings.md
says which to choose.
"""

from graphrag_orm.embeddings.base import Embedder, EmbeddingVectors
from graphrag_orm.embeddings.hashing import HashingEmbedder
from graphrag_orm.embeddings.local import LocalEmbedder
from graphrag_orm.embeddings.openai import OpenAIEmbedder
from graphrag_orm.embeddings.sets import EmbeddingSet, Similarity
from graphrag_orm.embeddings.validation import EmbeddingRejected, validate_vectors

__all__ = [
    "Embedder",
    "EmbeddingRejected",
    "EmbeddingSet",
    "EmbeddingVectors",
    "HashingEmbedder",
    "LocalEmbedder",
    "OpenAIEmbedder",
    "Similarity",
    "validate_vectors",
]
