"""The backfill: chunks whose staging vector is not from the new set yet, embedded a page at a time.

One page is read (keys and texts, by key, after the last key seen), embedded in batches
through the retry policy (``lanes`` calls at once), validated against the new set
(count, dimensions, finite, non-zero) and written in one transaction with the
staged-set marker. A page is written whole or not at all, so a backfill killed at any
point (an embedder that fails, a cancelled task, a lost process) leaves only whole pages
behind, and the next call starts from the first chunk still to do: done pages are never
embedded again. A chunk whose text changed between the read and the write is skipped
and stays to do.

Run one backfill of a plan at a time: two would embed the same pages twice (the writes
are idempotent, the model calls are not free).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from graphrag_orm.codes import DocumentErrorCode, LimitName
from graphrag_orm.embeddings import Embedder, EmbeddingSet, validate_vectors
from graphrag_orm.embeddings.validation import validate_usage
from graphrag_orm.reembedding.options import BackfillOptions
from graphrag_orm.reembedding.receipts import BackfillReceipt
from graphrag_orm.reembedding.statements import ReembeddingStatements
from graphrag_orm.retry import RetryPolicy, RetryTally
from graphrag_orm.store import Store, StoreTransaction
from graphrag_orm.tracing import SpanName, span
from graphrag_orm.values import Limit

__all__ = ["BackfillProgress", "run_backfill"]


@dataclass(frozen=True)
class BackfillProgress:
    """Reported after each written page: chunks embedded by this call, and of how many to do."""

    chunks_embedded: int
    to_do: int
    pages: int


@dataclass
class _Counts:
    embedded: int = 0
    pages: int = 0
    calls: int = 0
    tokens: int = 0
    tokens_reported: bool = True


async def _count_to_do(store: Store, statements: ReembeddingStatements, to_set: EmbeddingSet) -> int:
    result = await store.read(statements.to_do, {"to": to_set.id}, name="reembedding.to_do")
    return int(result.value("to_do", 0))


async def _embed_page(
    texts: Sequence[str],
    embedder: Embedder,
    to_set: EmbeddingSet,
    options: BackfillOptions,
    policy: RetryPolicy,
    tally: RetryTally,
    counts: _Counts,
) -> list[list[float]]:
    size = options.embedding_batch_size
    batches = [list(texts[i : i + size]) for i in range(0, len(texts), size)]
    lanes = asyncio.Semaphore(options.lanes)

    async def one(batch: list[str]) -> list[list[float]]:
        async with lanes:
            result = await policy.run(
                lambda: embedder.embed(batch), code=DocumentErrorCode.EMBEDDING_FAILED.value, tally=tally
            )
            counts.calls += 1
            tokens = validate_usage(getattr(result, "input_tokens", None))
            if tokens is None:
                counts.tokens_reported = False
            else:
                counts.tokens += tokens
            return validate_vectors(result, len(batch), to_set)

    tasks = [asyncio.ensure_future(one(batch)) for batch in batches]
    try:
        results = await asyncio.gather(*tasks)
    except BaseException:
        # The first failure (or a cancellation) ends the page: its other calls are cancelled and awaited.
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return [vector for batch in results for vector in batch]


async def run_backfill(
    store: Store,
    statements: ReembeddingStatements,
    from_set: EmbeddingSet,
    to_set: EmbeddingSet,
    embedder: Embedder,
    options: BackfillOptions,
    progress: Callable[[BackfillProgress], None] | None = None,
) -> BackfillReceipt:
    """Embed and stage every chunk still to do, at most ``options.max_pages`` pages; see the module."""
    began = time.perf_counter()
    policy, tally, counts = RetryPolicy(options.retry), RetryTally(), _Counts()
    to_do = await _count_to_do(store, statements, to_set)
    after, limited = "", False
    while True:
        if counts.pages >= options.max_pages:
            limited = True
            break
        rows = (
            await store.read(
                statements.page,
                {"to": to_set.id, "after": after, "page": options.page_size},
                name="reembedding.backfill.page",
            )
        ).records
        if not rows:
            break
        after = str(rows[-1]["id"])
        with span(SpanName.REEMBED, phase="backfill", chunks=len(rows)) as traced:
            vectors = await _embed_page(
                [str(row["text"]) for row in rows], embedder, to_set, options, policy, tally, counts
            )
            written = await _write_page(store, statements, to_set, rows, vectors, options.write_attempts)
            traced.set("retries", tally.summary().retries)
        counts.embedded += written
        counts.pages += 1
        if progress is not None:
            progress(BackfillProgress(counts.embedded, to_do, counts.pages))
        if len(rows) < options.page_size:
            break
    left = await _count_to_do(store, statements, to_set)
    return BackfillReceipt(
        from_set_id=from_set.id,
        to_set_id=to_set.id,
        chunks_embedded=counts.embedded,
        pages=counts.pages,
        embedding_calls=counts.calls,
        input_tokens=counts.tokens if counts.tokens_reported and counts.calls else None,
        retries=tally.summary(),
        seconds=time.perf_counter() - began,
        chunks_left=left,
        limits_reached=(Limit(name=LimitName.MAX_PAGES, value=options.max_pages),) if limited and left else (),
    )


async def _write_page(
    store: Store,
    statements: ReembeddingStatements,
    to_set: EmbeddingSet,
    rows: Sequence[dict[str, Any]],
    vectors: Sequence[list[float]],
    attempts: int,
) -> int:
    payload = [
        {"id": row["id"], "text": row["text"], "vector": vector} for row, vector in zip(rows, vectors, strict=True)
    ]

    async def work(tx: StoreTransaction) -> int:
        result = await tx.run(statements.stage, {"to": to_set.id, "rows": payload}, name="reembedding.backfill.write")
        return int(result.value("written", 0))

    return await store.write(work, attempts=attempts)
