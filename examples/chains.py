"""The migration chain a sample with an ontology applies: the toolkit's chain plus one revision.

That revision adds the ontology's keys and names index, and swaps the chunk vector index
for the embedding set's when it is not the offline set's (``next_revision`` computes it,
so it matches whichever embedder the sample chose).
"""

from __future__ import annotations

from graphrag_orm.embeddings import EmbeddingSet
from graphrag_orm.layout import Layout
from graphrag_orm.migrate import Chain, next_revision
from graphrag_orm.ontology import Ontology

__all__ = ["sample_chain"]


def sample_chain(ontology: Ontology, embedding_set: EmbeddingSet, sample: str) -> Chain:
    """The toolkit's chain and revision ``0002_<sample>_<vector index>`` for ``ontology`` and ``embedding_set``."""
    chain = Chain.load()
    revision = next_revision(
        chain,
        Layout.DEFAULT,
        embedding_set,
        ontology,
        revision=f"0002_{sample}_{embedding_set.vector_index_name}",
        message=f"the {ontology.name} ontology, and the chunk vector index for {embedding_set.id}",
    )
    revisions = [*chain.revisions, revision] if revision is not None else list(chain.revisions)
    return Chain.from_revisions(revisions, source=f"{chain.source} + the {sample} sample")
