"""Undo: take back exactly what one adoption run added, from what still carries its id.

The run must be an adoption run (its ``settingsFingerprint`` starts with ``adopt:``),
else ``AdoptionError("run-not-found")`` and nothing changes. Then, in pages of at most
``batch_size`` elements, each its own write transaction: ``runId`` is removed from the
links, then the keys apply wrote from documents, then chunks, each only where ``runId`` is
still this run's (and, in a tenanted graph, only on the store's tenant's nodes and the
links of its chunks: the run must be the tenant's too). A document the toolkit ingested again since belongs to that later run
and stays, with the chunks that run wrote. Last, the run node is deleted, only when
nothing names it any more. Labels, the other library's properties and indexes are never
touched. A page left unfinished by a failure is taken back by undoing again.
"""

from __future__ import annotations

from graphrag_orm.adoption.identity import RUN_PREFIX
from graphrag_orm.adoption.statements import AdoptionStatements
from graphrag_orm.adoption.values import UndoReceipt
from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import AdoptionError
from graphrag_orm.store import Store, StoreTransaction

__all__ = ["undo"]


async def undo(store: Store, statements: AdoptionStatements, run_id: str, batch_size: int) -> UndoReceipt:
    """Remove what run ``run_id`` added (see the module's docstring)."""
    fingerprint = (await store.read(statements.run, {"run": run_id}, name="adoption.undo.run")).value("fingerprint")
    if not isinstance(fingerprint, str) or not fingerprint.startswith(RUN_PREFIX):
        raise AdoptionError(ErrorCode.RUN_NOT_FOUND, "no adoption run has that id; nothing was changed")
    removed = {"documents": 0, "chunks": 0, "links": 0}
    batches = 0
    for kind, cypher in (
        ("links", statements.undo_links),
        ("documents", statements.undo_documents),
        ("chunks", statements.undo_chunks),
    ):
        while True:
            count = await _page(store, cypher, run_id, batch_size, f"adoption.undo.{kind}")
            if not count:
                break
            removed[kind] += count
            batches += 1

    async def delete_run(tx: StoreTransaction) -> None:
        await tx.run(statements.delete_run, {"run": run_id}, name="adoption.undo.delete_run")

    await store.write(delete_run)
    return UndoReceipt(run_id=run_id, batches=batches, **removed)


async def _page(store: Store, cypher: str, run_id: str, limit: int, name: str) -> int:
    async def work(tx: StoreTransaction) -> int:
        return int((await tx.run(cypher, {"run": run_id, "limit": limit}, name=name)).value("removed", 0))

    return await store.write(work)
