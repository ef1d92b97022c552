"""Reading what a removal covers: documents by id, by run, all of them, and orphans. Reads only.

Documents are read in pages ordered by id (at most :data:`SCOPE_PAGE` ids held at a
time), so a scope of any size is removed with bounded memory. A document's size is
its stored ``lengthBytes``; a group of sections and chunks whose document is gone
(an orphan group) is sized by the end of its last chunk. A section or chunk without a
``documentId`` is never part of a scope: the toolkit always writes one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from neomodel import adb

from graphrag_orm.maintenance.ownership import stamps_from_rows
from graphrag_orm.maintenance.reports import RemovalPreview, ResetScope
from graphrag_orm.models import LexicalModel
from graphrag_orm.store.batches import EdgeWrites, NodeWrites

#: Document ids read per page when a scope is walked.
SCOPE_PAGE = 10_000


@dataclass(frozen=True)
class DocumentSize:
    """One document of a scope: its id and its source size in UTF-8 bytes (the batch bound)."""

    document_id: str
    utf8_bytes: int


@dataclass(frozen=True)
class NamedDocuments:
    """The documents asked for by id: what exists (with sizes and run stamps) and what does not."""

    found: tuple[DocumentSize, ...]
    not_found: tuple[str, ...]
    stamps: dict[str | None, int]
    known_runs: frozenset[str]


class LexicalNames:
    """Stored names of the lexical model, read once from its classes."""

    def __init__(self, model: LexicalModel) -> None:
        layout = model.layout
        self.document = NodeWrites(model.document)
        self.section = NodeWrites(model.section)
        self.chunk = NodeWrites(model.chunk)
        self.lease = NodeWrites(model.lease)
        self.run = NodeWrites(model.run)
        self.doc_label, self.doc_key = self.document.label, self.document.key
        self.section_label, self.chunk_label = self.section.label, self.chunk.label
        self.chunk_key = self.chunk.key
        self.section_doc = self.section.stored("document_id")
        self.chunk_doc = self.chunk.stored("document_id")
        self.lease_label, self.lease_key = self.lease.label, self.lease.key
        self.lease_expires = self.lease.stored("expires_at")
        self.lease_claims = self.lease.stored("claims")
        self.doc_length = self.document.stored("length_bytes")
        self.chunk_end = self.chunk.stored("end_byte")
        self.run_label, self.run_key = self.run.label, self.run.key
        self.run_status = self.run.stored("status")
        node_runs = {
            self.document.stored("run_id"),
            self.section.stored("run_id"),
            self.chunk.stored("run_id"),
            self.lease.stored("run_id"),
        }
        edges = [
            EdgeWrites(model.chunk, "document"),
            EdgeWrites(model.chunk, "section"),
            EdgeWrites(model.chunk, "next"),
            EdgeWrites(model.section, "document"),
            EdgeWrites(model.section, "parent"),
        ]
        edge_runs = {edge.properties["run_id"][0] for edge in edges}
        if len(node_runs | edge_runs) != 1:
            raise TypeError(f"the lexical model stores run ids under several names: {sorted(node_runs | edge_runs)}")
        #: The stored name of every run id (``runId``).
        self.run_id = next(iter(node_runs))
        self.structural_types: tuple[str, ...] = layout.relationship_types
        self.structural = "|".join(layout.relationship_types)


class ScopeReader:
    """Walks the documents of a scope and counts what it holds."""

    def __init__(self, model: LexicalModel, allowed_types: Sequence[str] | None = None) -> None:
        n = self.names = LexicalNames(model)
        #: Relationship types maintenance may find on lexical nodes (structural, and the extension's).
        self.allowed_types = tuple(allowed_types or n.structural_types)
        allowed = "|".join(self.allowed_types)
        doc, key, length = n.doc_label, n.doc_key, n.doc_length
        self._all = (
            f"MATCH (d:{doc}) WHERE d.{key} > $after "
            f"RETURN d.{key}, coalesce(d.{length}, 0) ORDER BY d.{key} LIMIT $page"
        )
        self._by_run = (
            f"MATCH (d:{doc}) WHERE d.{n.run_id} IN $runs AND d.{key} > $after "
            f"RETURN d.{key}, coalesce(d.{length}, 0) ORDER BY d.{key} LIMIT $page"
        )
        self._named = (
            f"UNWIND $ids AS id OPTIONAL MATCH (d:{doc} {{{key}: id}}) "
            f"RETURN id, d IS NOT NULL, d.{length}, d.{n.run_id}, "
            f"d IS NOT NULL AND EXISTS {{ MATCH (:{n.run_label} {{{n.run_key}: d.{n.run_id}}}) }}"
        )
        # For ids without their document: the sections and chunks left under them, sized by the last byte.
        self._named_parts = (
            f"UNWIND $ids AS id RETURN id, "
            f"COLLECT {{ MATCH (c:{n.chunk_label} {{{n.chunk_doc}: id}}) RETURN c.{n.chunk_end} }} + "
            f"COLLECT {{ MATCH (s:{n.section_label} {{{n.section_doc}: id}}) RETURN 0 }}"
        )
        orphan_chunk = f"c.{n.chunk_doc} IS NOT NULL AND NOT EXISTS {{ MATCH (:{doc} {{{key}: c.{n.chunk_doc}}}) }}"
        orphan_section = (
            f"s.{n.section_doc} IS NOT NULL AND NOT EXISTS {{ MATCH (:{doc} {{{key}: s.{n.section_doc}}}) }}"
        )
        self._orphan_groups = (
            f"CALL () {{ MATCH (c:{n.chunk_label}) WHERE {orphan_chunk} "
            f"RETURN c.{n.chunk_doc} AS id, c.{n.chunk_end} AS end "
            f"UNION ALL MATCH (s:{n.section_label}) WHERE {orphan_section} "
            f"RETURN s.{n.section_doc} AS id, 0 AS end }} "
            "WITH id, max(end) AS bytes WHERE id > $after "
            "RETURN id, coalesce(bytes, 0) ORDER BY id LIMIT $page"
        )
        self._orphan_stamps = (
            f"CALL () {{ MATCH (c:{n.chunk_label}) WHERE {orphan_chunk} RETURN 'chunks' AS kind, c.{n.run_id} AS run "
            f"UNION ALL MATCH (s:{n.section_label}) WHERE {orphan_section} "
            f"RETURN 'sections' AS kind, s.{n.run_id} AS run }} "
            "RETURN kind, run, count(*)"
        )
        #: Counts for health: orphan chunks, orphan sections, and the documents they name.
        self.orphan_counts = (
            f"CALL () {{ MATCH (c:{n.chunk_label}) WHERE {orphan_chunk} RETURN 'chunk' AS kind, c.{n.chunk_doc} AS id "
            f"UNION ALL MATCH (s:{n.section_label}) WHERE {orphan_section} RETURN 'section' AS kind, "
            f"s.{n.section_doc} AS id }} "
            "RETURN sum(CASE kind WHEN 'chunk' THEN 1 ELSE 0 END), sum(CASE kind WHEN 'section' THEN 1 ELSE 0 END), "
            "count(DISTINCT id), collect(DISTINCT id)[0..$sample]"
        )
        # One pass: run stamps of every node and structural link, and (from degrees, without
        # expanding) how many relationships of types not in ``allowed_types`` each node has.
        other = f"COUNT {{ (x)--() }} - COUNT {{ (x)-[:{allowed}]-() }}"
        self._graph_stamps = (
            f"CALL () {{ MATCH (x:{doc}) RETURN 'documents' AS kind, x.{n.run_id} AS run, {other} AS other "
            f"UNION ALL MATCH (x:{n.section_label}) RETURN 'sections' AS kind, x.{n.run_id} AS run, {other} AS other "
            f"UNION ALL MATCH (x:{n.chunk_label}) RETURN 'chunks' AS kind, x.{n.run_id} AS run, {other} AS other "
            f"UNION ALL MATCH ()-[x:{n.structural}]->() RETURN 'links' AS kind, x.{n.run_id} AS run, 0 AS other }} "
            "RETURN kind, run, count(*), sum(other)"
        )
        self._graph_unowned = (
            f"CALL () {{ MATCH (x:{doc}) RETURN x UNION MATCH (x:{n.section_label}) RETURN x "
            f"UNION MATCH (x:{n.chunk_label}) RETURN x }} "
            "MATCH (x)-[r]-() WHERE NOT type(r) IN $allowed RETURN type(r), count(DISTINCT r) ORDER BY type(r)"
        )
        self._runs_exist = f"MATCH (r:{n.run_label}) WHERE r.{n.run_key} IN $runs RETURN r.{n.run_key}"
        self._documents_of_runs = f"MATCH (d:{doc}) WHERE d.{n.run_id} IN $runs RETURN d.{n.run_id}, count(d)"
        self._preview_everything = (
            f"RETURN COUNT {{ MATCH (d:{doc}) }}, "
            f"COUNT {{ MATCH (s:{n.section_label}) WHERE s.{n.section_doc} IS NOT NULL }}, "
            f"COUNT {{ MATCH (c:{n.chunk_label}) WHERE c.{n.chunk_doc} IS NOT NULL }}"
        )
        self._preview_scope = (
            f"CALL () {{ MATCH (d:{doc}) WHERE d.{n.run_id} IN $runs RETURN d.{key} AS id "
            "UNION UNWIND $ids AS id RETURN id } "
            "WITH collect(id) AS ids "
            f"RETURN COUNT {{ MATCH (d:{doc}) WHERE d.{key} IN ids }}, "
            f"COUNT {{ MATCH (s:{n.section_label}) WHERE s.{n.section_doc} IN ids }}, "
            f"COUNT {{ MATCH (c:{n.chunk_label}) WHERE c.{n.chunk_doc} IN ids }}"
        )

    async def _pages(self, statement: str, parameters: dict[str, Any]) -> AsyncIterator[list[DocumentSize]]:
        after = ""
        while True:
            rows, _ = await adb.cypher_query(statement, {**parameters, "after": after, "page": SCOPE_PAGE})
            if not rows:
                return
            yield [DocumentSize(str(row[0]), int(row[1])) for row in rows]
            if len(rows) < SCOPE_PAGE:
                return
            after = str(rows[-1][0])

    def all_documents(self) -> AsyncIterator[list[DocumentSize]]:
        """Every document node, in pages ordered by id (removal between pages is expected)."""
        return self._pages(self._all, {})

    def documents_of_runs(self, run_ids: Sequence[str]) -> AsyncIterator[list[DocumentSize]]:
        """Documents whose last write was by one of ``run_ids``, in pages ordered by id."""
        return self._pages(self._by_run, {"runs": list(run_ids)})

    def orphan_groups(self) -> AsyncIterator[list[DocumentSize]]:
        """Document ids that sections or chunks name but no document node has, in pages."""
        return self._pages(self._orphan_groups, {})

    async def named_documents(self, document_ids: Sequence[str]) -> NamedDocuments:
        """The given ids (deduplicated, sorted): sizes, run stamps of their documents, and ids with nothing stored."""
        wanted = sorted(set(document_ids))
        found: list[DocumentSize] = []
        missing: list[str] = []
        stamps: dict[str | None, int] = {}
        known_runs: set[str] = set()
        for start in range(0, len(wanted), SCOPE_PAGE):
            rows, _ = await adb.cypher_query(self._named, {"ids": wanted[start : start + SCOPE_PAGE]})
            absent: list[str] = []
            for document_id, exists, length, run, known in rows:
                if known:
                    known_runs.add(str(run))
                if exists:
                    key = None if run is None else str(run)
                    stamps[key] = stamps.get(key, 0) + 1
                    found.append(DocumentSize(str(document_id), int(length or 0)))
                else:
                    absent.append(str(document_id))
            if absent:
                rows, _ = await adb.cypher_query(self._named_parts, {"ids": absent})
                for document_id, parts in rows:
                    if parts:
                        found.append(DocumentSize(str(document_id), max(int(end or 0) for end in parts)))
                    else:
                        missing.append(str(document_id))
        found.sort(key=lambda item: item.document_id)
        return NamedDocuments(tuple(found), tuple(missing), stamps, frozenset(known_runs))

    async def graph_stamps(self) -> tuple[dict[str, dict[str | None, int]], list[tuple[str, int]]]:
        """Run stamps of every document, section, chunk and structural link under the layout's names,
        and the relationship types outside ``allowed_types`` found on those nodes, with counts."""
        rows, _ = await adb.cypher_query(self._graph_stamps)
        stamps = stamps_from_rows([row[:3] for row in rows])
        if not any(row[3] for row in rows):
            return stamps, []
        rows, _ = await adb.cypher_query(self._graph_unowned, {"allowed": list(self.allowed_types)})
        return stamps, [(str(row[0]), int(row[1])) for row in rows]

    async def orphan_stamps(self) -> dict[str, dict[str | None, int]]:
        """Run stamps of the sections and chunks whose document is gone."""
        rows, _ = await adb.cypher_query(self._orphan_stamps)
        return stamps_from_rows(rows)

    async def unknown_runs_in_use(self, run_ids: Sequence[str]) -> dict[str | None, int]:
        """For run ids that name no run node: how many documents carry each (as run stamps)."""
        wanted = sorted(set(run_ids))
        rows, _ = await adb.cypher_query(self._runs_exist, {"runs": wanted})
        unknown = sorted(set(wanted) - {row[0] for row in rows})
        if not unknown:
            return {}
        rows, _ = await adb.cypher_query(self._documents_of_runs, {"runs": unknown})
        return {str(row[0]): int(row[1]) for row in rows}

    async def preview(self, scope: ResetScope) -> RemovalPreview:
        """Documents, sections and chunks ``reset(scope)`` would remove, counted by reading only."""
        if scope.is_everything:
            rows, _ = await adb.cypher_query(self._preview_everything)
        else:
            rows, _ = await adb.cypher_query(
                self._preview_scope,
                {"runs": list(scope.run_ids or ()), "ids": list(scope.document_ids or ())},
            )
        documents, sections, chunks = rows[0]
        return RemovalPreview(documents=int(documents), sections=int(sections), chunks=int(chunks))


__all__ = ["SCOPE_PAGE", "DocumentSize", "LexicalNames", "NamedDocuments", "ScopeReader"]
