"""Adopt a graph neo4j-graphrag wrote: documents and chunks keyed, placed and undone exactly.

neo4j-graphrag stores ``(:Chunk {text, index, embedding})-[:FROM_DOCUMENT]->(:Document {path})``
and ``NEXT_CHUNK``, with no keys, byte spans or runs. An adoption adds them, so the
toolkit retrieves and answers from that graph with checked citations while
neo4j-graphrag keeps reading it as before, and undo removes exactly what it added::

    plan = Adoption(rag.store).plan(layout, embedding_set, AdoptionOptions(source_files={...}))
    steps = plan.prepare_steps()      # the schema, as migration steps, applied before apply
    preview = await plan.preview()    # reads only: counts, grounding, blockers
    receipt = await plan.apply()      # one run that only adds
    await plan.undo(receipt.run_id)   # takes back what that run added

Grounding: a document whose source file holds its chunks byte-exact, in order, is
source-grounded like an ingested one; any other is chunk-grounded (``Grounding.CHUNK``):
a citation then proves the quote is in the stored passage, not where the passage sits
in its source.
"""

from graphrag_orm.adoption.identity import ADOPTED_SCHEME, adopted_chunk_id, adopted_uri
from graphrag_orm.adoption.plan import Adoption, AdoptionPlan
from graphrag_orm.adoption.values import (
    AdoptionBlocker,
    AdoptionOptions,
    AdoptionPreview,
    AdoptionReceipt,
    UndoReceipt,
)

__all__ = [
    "ADOPTED_SCHEME",
    "Adoption",
    "AdoptionBlocker",
    "AdoptionOptions",
    "AdoptionPlan",
    "AdoptionPreview",
    "AdoptionReceipt",
    "UndoReceipt",
    "adopted_chunk_id",
    "adopted_uri",
]
