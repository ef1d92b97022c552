"""Checks every vector against its embedding set before anything is written.

A vector must have exactly the set's dimensions, finite coordinates within
float32 range (Neo4j stores vectors as float32) and at least one non-zero
coordinate, whatever the similarity: a zero vector has no direction, so cosine
similarity is undefined for it.

An embedder's output is checked as it comes, whatever it is: ``None``, a generator
or any other object that is not a sized sequence of vectors is ``embedding-count``
(there are not one vector per text); a vector that is ``None``, a generator, a
string or a mapping is ``invalid-embedding``. The token usage an embedder reports
must be a whole number of at least 0 (or absent), else ``embedding-failed``.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Collection, Mapping
from typing import Any, SupportsIndex, TypeGuard

from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.embeddings.sets import EmbeddingSet
from graphrag_orm.errors import EmbeddingRejected

__all__ = ["FLOAT32_MAX", "EmbeddingRejected", "validate_usage", "validate_vectors"]

FLOAT32_MAX = 3.4028234663852886e38
"""The largest finite float32; a coordinate beyond it cannot be stored."""


def _reject(code: DocumentErrorCode, message: str) -> EmbeddingRejected:
    return EmbeddingRejected(code.value, message)


def _sized(value: object) -> TypeGuard[Collection[Any]]:
    """A list, tuple, array or the like: sized and iterable, and neither text nor a mapping."""
    return (
        hasattr(value, "__len__")
        and hasattr(value, "__iter__")
        and not isinstance(value, str | bytes | bytearray | memoryview | Mapping)
    )


def validate_usage(tokens: object) -> int | None:
    """The token count an embedder reported: None when absent, else a whole number of at least 0.

    Anything else (a float, a string, a negative number, a bool) is
    ``EmbeddingRejected("embedding-failed")``: the call's usage cannot be trusted.
    """
    if tokens is None:
        return None
    try:
        count = operator.index(tokens) if isinstance(tokens, SupportsIndex) else -1
    except TypeError:
        count = -1
    if isinstance(tokens, bool) or count < 0:
        raise _reject(
            DocumentErrorCode.EMBEDDING_FAILED,
            f"the embedder reported {type(tokens).__name__} input tokens, not a whole number of at least 0",
        )
    return int(count)


def validate_vectors(vectors: object, expected_count: int, embedding_set: EmbeddingSet) -> list[list[float]]:
    """The vectors as lists of floats, checked; L2-normalised when ``embedding_set.normalize``.

    ``vectors`` is whatever the embedder returned. Raises :class:`EmbeddingRejected`
    for the first violation found; nothing is returned in part. The input is never
    modified.
    """
    if not _sized(vectors):
        raise _reject(
            DocumentErrorCode.EMBEDDING_COUNT,
            f"expected {expected_count} vectors, got {type(vectors).__name__}",
        )
    if len(vectors) != expected_count:
        raise _reject(
            DocumentErrorCode.EMBEDDING_COUNT,
            f"expected {expected_count} vectors, got {len(vectors)}",
        )
    dimensions = embedding_set.dimensions
    checked: list[list[float]] = []
    for position, vector in enumerate(vectors):
        if not _sized(vector):
            raise _reject(
                DocumentErrorCode.INVALID_EMBEDDING,
                f"vector {position} is {type(vector).__name__}, not a list of numbers",
            )
        if len(vector) != dimensions:
            raise _reject(
                DocumentErrorCode.EMBEDDING_DIMENSIONS,
                f"vector {position} has {len(vector)} dimensions; the embedding set "
                f"{embedding_set.id} needs {dimensions}",
            )
        try:
            # C-level loops (hypot, float, min, max) keep 20,000 x 1,536 coordinates fast;
            # hypot also refuses non-numbers (strings) that float() would parse.
            norm = math.hypot(*vector)
            coordinates = list(map(float, vector))
        except (TypeError, ValueError, OverflowError):
            raise _reject(
                DocumentErrorCode.INVALID_EMBEDDING,
                f"vector {position} has a coordinate that is not a number",
            ) from None
        if not math.isfinite(norm):
            if any(math.isnan(x) for x in coordinates):
                raise _reject(DocumentErrorCode.INVALID_EMBEDDING, f"vector {position} has NaN")
            if any(math.isinf(x) for x in coordinates):
                raise _reject(DocumentErrorCode.INVALID_EMBEDDING, f"vector {position} has an infinite coordinate")
        if max(coordinates) > FLOAT32_MAX or min(coordinates) < -FLOAT32_MAX:
            raise _reject(
                DocumentErrorCode.INVALID_EMBEDDING,
                f"vector {position} has a coordinate outside float32 range",
            )
        if norm == 0.0:
            raise _reject(DocumentErrorCode.INVALID_EMBEDDING, f"vector {position} is all zeros")
        if embedding_set.normalize:
            coordinates = list(map(norm.__rtruediv__, coordinates))
        checked.append(coordinates)
    return checked
