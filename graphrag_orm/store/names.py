"""Stored names of one layout's lexical model, read once from its classes.

Every service renders its statements from a :class:`StoredNames` (``model.names``):
labels, keys, property and relationship-type names come from the neomodel classes'
declarations (``db_property``, ``__label__``, relationship definitions), so no
service spells a stored name the model already knows. Labels and types were validated
as plain identifiers by the layout, so they are placed in query text; every value is
a parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphrag_orm.store.batches import EdgeWrites, NodeWrites
from graphrag_orm.tenancy import TENANT_PARAMETER, TENANT_PROPERTY

if TYPE_CHECKING:
    from graphrag_orm.models import LexicalModel

__all__ = ["StoredNames"]


@dataclass(frozen=True)
class StoredNames:
    """Labels, keys, properties and relationship types of one lexical model."""

    document: NodeWrites
    section: NodeWrites
    chunk: NodeWrites
    run: NodeWrites
    lease: NodeWrites
    #: The communities of the knowledge graph (graphrag_orm.communities), under the layout's label.
    community: NodeWrites
    #: Community reports and their findings (graphrag_orm.communities.reports).
    report: NodeWrites
    finding: NodeWrites
    chunk_document: EdgeWrites
    chunk_section: EdgeWrites
    next_chunk: EdgeWrites
    section_document: EdgeWrites
    subsection: EdgeWrites
    #: The stored name of every run id (``runId``), on nodes and edges alike.
    run_id: str
    #: The layout's structural relationship types.
    structural_types: tuple[str, ...]
    #: A tenanted layout (docs/tenancy.md): its lexical nodes carry ``tenant``, written and
    #: matched with the ``$tenant`` parameter the store binds; untenanted, the helpers below
    #: render nothing, so every statement is what it was.
    tenanted: bool = False

    @classmethod
    def of(cls, model: LexicalModel) -> StoredNames:
        document, section, chunk = NodeWrites(model.document), NodeWrites(model.section), NodeWrites(model.chunk)
        run, lease, community = NodeWrites(model.run), NodeWrites(model.lease), NodeWrites(model.community)
        report, finding = NodeWrites(model.report), NodeWrites(model.finding)
        chunk_document, chunk_section = EdgeWrites(model.chunk, "document"), EdgeWrites(model.chunk, "section")
        next_chunk = EdgeWrites(model.chunk, "next")
        section_document, subsection = EdgeWrites(model.section, "document"), EdgeWrites(model.section, "parent")
        runs = {node.stored("run_id") for node in (document, section, chunk, lease)}
        runs |= {
            edge.properties["run_id"][0]
            for edge in (chunk_document, chunk_section, next_chunk, section_document, subsection)
        }
        if len(runs) != 1:
            raise TypeError(f"the lexical model stores run ids under several names: {sorted(runs)}")
        return cls(
            document=document,
            section=section,
            chunk=chunk,
            run=run,
            lease=lease,
            community=community,
            report=report,
            finding=finding,
            chunk_document=chunk_document,
            chunk_section=chunk_section,
            next_chunk=next_chunk,
            section_document=section_document,
            subsection=subsection,
            run_id=next(iter(runs)),
            structural_types=model.layout.relationship_types,
            tenanted=model.layout.tenanted,
        )

    @property
    def owned(self) -> str:
        """``, tenant: $tenant`` to close a node pattern with, in a tenanted layout; else nothing."""
        return f", {TENANT_PROPERTY}: ${TENANT_PARAMETER}" if self.tenanted else ""

    def tenant_and(self, variable: str) -> str:
        """`` AND v.tenant = $tenant`` to add to a condition, in a tenanted layout; else nothing."""
        return f" AND {variable}.{TENANT_PROPERTY} = ${TENANT_PARAMETER}" if self.tenanted else ""

    def tenant_where(self, variable: str) -> str:
        """``WHERE v.tenant = $tenant `` (with its trailing space), in a tenanted layout; else nothing."""
        return f"WHERE {variable}.{TENANT_PROPERTY} = ${TENANT_PARAMETER} " if self.tenanted else ""

    @property
    def structural(self) -> str:
        """The structural types joined for a relationship pattern (``A|B|C``)."""
        return "|".join(self.structural_types)
