"""Writing revisions for a person to review: the first one, the next one, the file.

Like Alembic's autogenerate, :func:`next_revision` compares what the chain's head
declares with what the toolkit declares now and writes the steps between them; it reads
no database, and a revision file is never overwritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.sets import EmbeddingSet
from graphrag_orm.errors import MigrationError
from graphrag_orm.layout import Layout
from graphrag_orm.migrate.chain import Chain
from graphrag_orm.migrate.revisions import Revision
from graphrag_orm.schema import CreateStep, DropStep, MigrationStep, Schema, SchemaContributor

__all__ = ["chain_for_embedding_set", "initial_revision", "next_revision", "write_revision"]


def initial_revision(
    layout: Layout,
    embedding_set: EmbeddingSet,
    ontology: SchemaContributor | None = None,
    *,
    revision: str = "0001_graphrag_schema",
    message: str | None = None,
    vector_filter: Sequence[str] = (),
) -> Revision:
    """The first revision of an application's chain, from :meth:`Schema.create_steps`."""
    return Revision.new(
        revision,
        None,
        message or f"graphrag-orm schema for embedding set {embedding_set.id}",
        Schema.create_steps(layout, embedding_set, ontology, vector_filter=vector_filter),
    )


def next_revision(
    chain: Chain,
    layout: Layout,
    embedding_set: EmbeddingSet,
    ontology: SchemaContributor | None = None,
    *,
    revision: str,
    message: str,
    vector_filter: Sequence[str] = (),
) -> Revision | None:
    """A revision that takes the chain's head schema to what the toolkit now declares, or None.

    Drops come first (of removed or changed definitions), then creations, constraints
    before indexes, each group by name. ``vector_filter`` declares chunk properties on the
    vector index for filtering inside it; a head index declaring others is dropped and
    created again (the server rebuilds it: the application's decision, made by reviewing
    and applying the revision).
    """
    current = chain.definitions_at() if chain.revisions else {}
    declared = {d.name: d for d in Schema.definitions(layout, embedding_set, ontology, vector_filter=vector_filter)}
    drops: list[MigrationStep] = [
        DropStep(definition=d) for name, d in sorted(current.items()) if declared.get(name) != d
    ]
    creates: list[MigrationStep] = [
        CreateStep(definition=d)
        for name, d in sorted(declared.items(), key=lambda kv: (not kv[1].is_constraint, kv[0]))
        if current.get(name) != d
    ]
    if not drops and not creates:
        return None
    return Revision.new(revision, chain.head, message, [*drops, *creates])


def chain_for_embedding_set(
    chain: Chain,
    embedding_set: EmbeddingSet,
    layout: Layout = Layout.DEFAULT,
    ontology: SchemaContributor | None = None,
) -> Chain:
    """``chain``, or ``chain`` and one more revision that swaps its chunk vector index for ``embedding_set``'s.

    The revision is derived, the same for the same chain and set (``<NNNN>_<index name>``,
    so its checksum is stable): the toolkit's own chain and the samples use it so that one
    ``migrations apply`` builds the index of the configured set. An application's chain
    is written and reviewed instead (:func:`next_revision`, ``migrations revision``).
    """
    revision = next_revision(
        chain,
        layout,
        embedding_set,
        ontology,
        revision=f"{len(chain.revisions) + 1:04d}_{embedding_set.vector_index_name}",
        message=f"the chunk vector index for {embedding_set.id}",
    )
    if revision is None:
        return chain
    return Chain.from_revisions([*chain.revisions, revision], source=f"{chain.source} + {embedding_set.id}")


def write_revision(directory: Path, revision: Revision) -> Path:
    """Write ``revision`` as ``<id>.json`` in ``directory``; ``revision-exists`` instead of overwriting."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{revision.revision}.json"
    try:
        with path.open("x", encoding="utf-8") as file:
            file.write(revision.to_file_json())
    except FileExistsError:
        raise MigrationError(ErrorCode.REVISION_EXISTS, f"{path} exists; revisions are never overwritten") from None
    return path
