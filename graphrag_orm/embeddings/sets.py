"""Embedding sets: which model wrote a vector, and the index that holds them.

One embedding set is active at a time: a vector index covers one label and
property, so changing the set means re-embedding and replacing the index through
a reviewed migration.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum

from pydantic import Field, computed_field

from graphrag_orm.values import Options

__all__ = ["MAX_DIMENSIONS", "OFFLINE_EMBEDDING_SET", "EmbeddingSet", "Similarity"]

MAX_DIMENSIONS = 4096


class Similarity(StrEnum):
    """The vector index's similarity function (Neo4j's names, lower-case)."""

    COSINE = "cosine"
    EUCLIDEAN = "euclidean"


class EmbeddingSet(Options):
    """A model, its dimensions and similarity; ``id`` and ``vector_index_name`` are derived.

    Both derived names are computed from the fields, so a ``model_copy(update=...)``
    stays consistent. Dimensions are 1..4,096 (Neo4j's vector index bound);
    anything else is refused with ``ConfigurationError("invalid-option")``.
    """

    model: str = Field(min_length=1, max_length=200)
    dimensions: int = Field(ge=1, le=MAX_DIMENSIONS)
    similarity: Similarity = Similarity.COSINE
    normalize: bool = False
    model_revision: str | None = Field(default=None, min_length=1, max_length=200)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def id(self) -> str:
        """Stable, readable id: model, revision, dimensions, similarity and normalisation."""
        revision = f"@{self.model_revision}" if self.model_revision else ""
        norm = ":normalized" if self.normalize else ""
        return f"{self.model}{revision}:{self.dimensions}:{self.similarity.value}{norm}"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def vector_index_name(self) -> str:
        """The index-name suffix for this set: a Cypher identifier derived from ``id``.

        The layout prefixes it (``graphrag_chunk_embedding_...``) unless the layout
        names the vector index itself.
        """
        digest = hashlib.sha256(self.id.encode("utf-8")).hexdigest()[:12]
        return f"embedding_{self.dimensions}_{self.similarity.value}_{digest}"


#: The offline stand-in set: HashingEmbedder(dimensions=256). The toolkit's own
#: migration chain (``migrations/``) and the offline demo use it; an application
#: with a real model starts its own chain with ``graphrag-orm migrations init``.
OFFLINE_EMBEDDING_SET = EmbeddingSet(model="graphrag-orm/hashing-v1", dimensions=256)
