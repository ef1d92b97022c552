"""``Reembedding(store).plan(...)``: checks a re-embedding's names and sets, then builds its plan.

Refusals, before anything is read or written: ``same-embedding-set`` (the two sets have
one id), ``invalid-layout`` (a staging property or index name that is not a plain Cypher
identifier), ``staging-property-in-use`` (the staging property is one the chunk already
stores: the live vector, its key, order or text, a fixed property such as
``embeddingSetId``, or the staged-set marker), ``vector-index-in-use`` (the new index
would have the old one's name). A tenanted graph (docs/tenancy.md) re-embeds per tenant:
a plan on a store bound to a tenant, with the tenanted layout, reads and writes that tenant's
chunks only; a tenanted store with an untenanted layout is ``tenant-refused`` (its statements
would filter by no tenant), the reverse ``tenant-required``.
"""

from __future__ import annotations

from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings import EmbeddingSet
from graphrag_orm.errors import ReembeddingError
from graphrag_orm.layout import DEFAULT_STAGING_PROPERTY, FIXED_CHUNK_PROPERTIES, Layout, validate_identifier
from graphrag_orm.reembedding.names import STAGED_SET_PROPERTY
from graphrag_orm.reembedding.plan import ReembeddingPlan
from graphrag_orm.store import Store
from graphrag_orm.tenancy import check_fenced

__all__ = ["DEFAULT_STAGING_PROPERTY", "Reembedding"]


class Reembedding:
    """Plans re-embeddings of the graph behind ``store`` (a facade's ``rag.store``)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def plan(
        self,
        layout: Layout,
        from_set: EmbeddingSet,
        to_set: EmbeddingSet,
        staging_property: str = DEFAULT_STAGING_PROPERTY,
        *,
        vector_index: str | None = None,
    ) -> ReembeddingPlan:
        """The plan from ``from_set`` (under ``layout``) to ``to_set`` on ``staging_property``.

        ``vector_index`` names the new set's index in :attr:`ReembeddingPlan.new_layout`; by
        default it is derived from the layout's prefix and the new set, as for any set.
        Reads nothing; see the module for the refusals.
        """
        check_fenced(layout.tenanted, self.store.tenanted, "a re-embedding")
        if from_set.id == to_set.id:
            raise ReembeddingError(
                ErrorCode.SAME_EMBEDDING_SET, f"the plan goes from {from_set.id} to the same set; nothing to re-embed"
            )
        validate_identifier(staging_property, "staging_property")
        stored = (
            layout.chunk_id_property,
            layout.chunk_order_property,
            layout.chunk_text_property,
            *FIXED_CHUNK_PROPERTIES,
            STAGED_SET_PROPERTY,
        )
        if staging_property == layout.chunk_embedding_property:
            raise ReembeddingError(
                ErrorCode.STAGING_PROPERTY_IN_USE,
                f"the staging property {staging_property!r} is the live embedding property; choose another "
                "(the next re-embedding swaps them back)",
            )
        if staging_property in stored:
            raise ReembeddingError(
                ErrorCode.STAGING_PROPERTY_IN_USE,
                f"the staging property {staging_property!r} is a property every chunk stores; choose another",
            )
        if vector_index is not None:
            validate_identifier(vector_index, "vector_index")
        new_layout = layout.replace(chunk_embedding_property=staging_property, vector_index=vector_index)
        old_name = layout.vector_index_name(from_set.vector_index_name)
        new_name = new_layout.vector_index_name(to_set.vector_index_name)
        if old_name == new_name or new_name == layout.fulltext_index_name():
            raise ReembeddingError(
                ErrorCode.VECTOR_INDEX_IN_USE,
                f"the new set's vector index would be named {new_name!r}, which the layout already uses; "
                "give another vector_index",
            )
        return ReembeddingPlan(self.store, layout, from_set, to_set, new_layout)
