"""An offline stand-in embedder: feature hashing of words and character trigrams.

It needs no model, no network and no key, and gives the same vector for the same
text on every machine, so tests, demos and offline runs can ingest and retrieve.
It is *not* a semantic model: texts are near when they share words or parts of
words, never because they mean the same thing. Wherever its output is shown it
should be labelled a stand-in (:attr:`HashingEmbedder.label`).
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence

from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.base import EmbeddingVectors
from graphrag_orm.embeddings.sets import MAX_DIMENSIONS
from graphrag_orm.errors import ConfigurationError

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"\w+")
_NON_SPACE = re.compile(r"\S+")

TRIGRAM_WEIGHT = 0.5
"""Weight of each character trigram against a whole word's 1.0: words dominate,
trigrams bring related forms (``embed``, ``embedding``) close."""

MAX_TRIGRAMS = 6
"""Trigrams hashed per word, from its start: whole short words, the stem of long ones
(``embedding`` and ``embedded`` share five), and a bounded cost per word."""

_CACHE_LIMIT = 200_000
"""Distinct words whose features are kept; the cache is cleared when it fills."""

_YIELD_EVERY = 256
"""Texts embedded between yields to the event loop, so other tasks (lease renewals) run."""

_EMPTY_TOKEN = "\x00empty"


class HashingEmbedder:
    """Deterministic, offline embeddings by feature hashing: a stand-in, not a semantic model.

    Each lower-cased word token (``\\w+``) adds ``1 + ln(count)`` to one signed
    bucket, and each of its first six character trigrams (with word-boundary
    marks) half as much to another, so words sharing stems land near each
    other. Buckets and signs come from BLAKE2b of the token and ``seed``. Vectors are
    L2-normalised and never all zero: a text with no characters but spaces gets
    one fixed non-zero vector; a text without word characters hashes its
    non-space runs instead.

    ``dimensions`` is 1..4,096 (``ConfigurationError("invalid-option")``
    otherwise). ``input_tokens`` of the result counts word tokens. Pure Python:
    roughly 4,000 (1,536 dimensions) to 8,000 (256 dimensions) texts of 1 KiB a
    second on one core, yielding to the event loop every few hundred texts.
    It reads the whole of every text (``max_input_tokens`` is None).
    """

    is_stand_in = True

    #: Every word of a text is hashed, however long: no window.
    max_input_tokens: int | None = None

    def __init__(self, dimensions: int, *, seed: int = 0) -> None:
        if isinstance(dimensions, bool) or not isinstance(dimensions, int):
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "HashingEmbedder: dimensions must be an integer")
        if not 1 <= dimensions <= MAX_DIMENSIONS:
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION,
                f"HashingEmbedder: dimensions must be between 1 and {MAX_DIMENSIONS}, got {dimensions}",
            )
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "HashingEmbedder: seed must be an integer")
        self.dimensions = dimensions
        self.seed = seed
        self.model = f"graphrag-orm-hashing-v1-seed{seed}"
        self.label = (
            f"HashingEmbedder ({dimensions} dimensions): an offline stand-in by feature hashing, not a semantic model"
        )
        self._key = hashlib.blake2b(str(seed).encode("ascii"), digest_size=32).digest()
        self._features: dict[str, tuple[tuple[int, float], ...]] = {}
        self._empty = self._vector({_EMPTY_TOKEN: 1}) or [1.0] + [0.0] * (dimensions - 1)

    def __repr__(self) -> str:
        return f"HashingEmbedder(dimensions={self.dimensions}, seed={self.seed})"

    def _bucket(self, token: str) -> tuple[int, float]:
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8, key=self._key).digest()
        value = int.from_bytes(digest, "little")
        return value % self.dimensions, (1.0 if value >> 63 else -1.0)

    def _features_of(self, word: str) -> tuple[tuple[int, float], ...]:
        """The word's (bucket, weight) pairs, merged; computed once per distinct word."""
        features = self._features.get(word)
        if features is not None:
            return features
        merged: dict[int, float] = {}
        index, sign = self._bucket("w:" + word)
        merged[index] = sign
        marked = f"<{word}>"
        for start in range(min(len(marked) - 2, MAX_TRIGRAMS)):
            index, sign = self._bucket("t:" + marked[start : start + 3])
            merged[index] = merged.get(index, 0.0) + sign * TRIGRAM_WEIGHT
        features = tuple(merged.items())
        if len(self._features) >= _CACHE_LIMIT:
            self._features.clear()
        self._features[word] = features
        return features

    def _vector(self, counts: dict[str, int]) -> list[float] | None:
        """The normalised vector of word counts, or ``None`` if the buckets cancelled out."""
        sparse: dict[int, float] = {}
        get = sparse.get
        features_of = self._features_of
        for word, count in counts.items():
            if count == 1:  # most words of a chunk occur once: skip the multiplication
                for index, value in features_of(word):
                    sparse[index] = get(index, 0.0) + value
            else:
                weight = 1.0 + math.log(count)
                for index, value in features_of(word):
                    sparse[index] = get(index, 0.0) + value * weight
        norm = math.hypot(*sparse.values())
        if norm == 0.0:
            return None
        vector = [0.0] * self.dimensions
        for index, value in sparse.items():
            vector[index] = value / norm
        return vector

    def embed_one(self, text: str) -> tuple[list[float], int]:
        """One text's vector and its number of word tokens (synchronous)."""
        lowered = text.lower()
        words = _WORD.findall(lowered)
        tokens = words or _NON_SPACE.findall(lowered)
        if not tokens:
            return list(self._empty), 0
        vector = self._vector(Counter(tokens))
        # Signed buckets could in principle cancel to zero; a zero vector is never returned.
        return (vector if vector is not None else list(self._empty)), len(words)

    async def embed(self, texts: Sequence[str]) -> EmbeddingVectors:
        """One unit vector per text, in order; ``input_tokens`` is the number of word tokens."""
        vectors: list[list[float]] = []
        tokens = 0
        for position, text in enumerate(texts):
            if position and position % _YIELD_EVERY == 0:
                await asyncio.sleep(0)
            vector, count = self.embed_one(text)
            vectors.append(vector)
            tokens += count
        return EmbeddingVectors(vectors, input_tokens=tokens)
