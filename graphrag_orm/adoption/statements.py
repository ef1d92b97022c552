"""Every statement adoption sends, rendered once from a lexical model's stored names.

Labels, types and property names come from the layout's model classes
(:class:`~graphrag_orm.store.StoredNames`); the path is neo4j-graphrag's ``path``. Every
value is a parameter; columns are read by key. Names (``adoption.*``) are what the
store's hooks see. Nodes found by a read are written by element id in the same
transaction, so the id cannot move between the read and the write.

In a tenanted layout (docs/tenancy.md) every statement sees only the nodes that carry no
tenant (the other library's, not claimed yet) and the store's tenant's own, through the
``$tenant`` the store binds: another tenant's documents, chunks, links and runs are never
read, counted or listed. Apply stamps ``tenant`` on what it adopts (undo removes it), the
run node carries it, and undo finds only the tenant's run. Untenanted, every statement is
what it was.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from graphrag_orm.adoption.identity import PATH_PROPERTY
from graphrag_orm.codes import ErrorCode
from graphrag_orm.evidence import GROUNDING_PROPERTY
from graphrag_orm.models import LexicalModel
from graphrag_orm.store.names import StoredNames
from graphrag_orm.tenancy import TENANT_PARAMETER, TENANT_PROPERTY

__all__ = ["AdoptionStatements"]

# A chunk with a missing or repeated index, named by its document's path and the index.
_INDEX_EXAMPLE = f"coalesce(d.{PATH_PROPERTY}, elementId(d)) + ' #' + coalesce(toStringOrNull(index), 'none')"


@dataclass(frozen=True)
class AdoptionStatements:
    """The dry run's reads, apply's page writes and undo's removals for one layout.

    Each statement is a named property, rendered on first use from the stored names.
    """

    names: StoredNames

    @classmethod
    def render(cls, model: LexicalModel) -> AdoptionStatements:
        return cls(model.names)

    @property
    def _d(self) -> str:
        return self.names.document.label

    @property
    def _c(self) -> str:
        return self.names.chunk.label

    @property
    def _run_id(self) -> str:
        return self.names.run_id

    @property
    def _tenanted(self) -> bool:
        return self.names.tenanted

    def _open(self, variable: str) -> str:
        """In a tenanted layout, that ``variable`` carries no tenant yet or the store's: the
        condition alone (for a ``WHERE``), else nothing."""
        if not self._tenanted:
            return ""
        return f"({variable}.{TENANT_PROPERTY} IS NULL OR {variable}.{TENANT_PROPERTY} = ${TENANT_PARAMETER})"

    def _and_open(self, variable: str) -> str:
        """`` AND `` and :meth:`_open`, in a tenanted layout; else nothing."""
        return f" AND {self._open(variable)}" if self._tenanted else ""

    def _where_open(self, variable: str) -> str:
        """``WHERE `` and :meth:`_open` with a trailing space, in a tenanted layout; else nothing."""
        return f"WHERE {self._open(variable)} " if self._tenanted else ""

    @property
    def _tenant_keys(self) -> tuple[str, ...]:
        """What apply stamps beyond the keys: ``tenant``, in a tenanted layout."""
        return (TENANT_PROPERTY,) if self._tenanted else ()

    @property
    def _stamp(self) -> str:
        """``, v.tenant = $tenant`` closing a ``SET`` of ``v``'s page write, in a tenanted layout."""
        return f", {{v}}.{TENANT_PROPERTY} = ${TENANT_PARAMETER}" if self._tenanted else ""

    @property
    def _links(self) -> str:
        """The chunk-to-document and next-chunk types, as one pattern alternative."""
        return f"{self.names.chunk_document.relationship_type}|{self.names.next_chunk.relationship_type}"

    @functools.cached_property
    def document_keys(self) -> tuple[str, ...]:
        """The stored names apply writes on documents (undo removes exactly these)."""
        doc = self.names.document
        stored = tuple(doc.stored(a) for a in ("source_uri", "media_type", "content_hash", "length_bytes"))
        return (doc.key, *stored[:3], stored[3], self._run_id, *self._tenant_keys)

    @functools.cached_property
    def chunk_keys(self) -> tuple[str, ...]:
        """The stored names apply writes on chunks (undo removes exactly these)."""
        chunk = self.names.chunk
        stored = tuple(chunk.stored(a) for a in ("document_id", "start_byte", "end_byte"))
        return (
            chunk.key,
            *stored,
            GROUNDING_PROPERTY,
            chunk.stored("embedding_set_id"),
            self._run_id,
            *self._tenant_keys,
        )

    @functools.cached_property
    def counts(self) -> str:
        """``documents``, ``chunks``, ``unembedded``, ``documentLinks``, ``nextLinks``."""
        d, c, embedding = self._d, self._c, self.names.chunk.stored("embedding")
        from_doc, next_chunk = self.names.chunk_document.relationship_type, self.names.next_chunk.relationship_type
        # Untenanted the ends of a link are anonymous, as they always were.
        a, b = ("a", "b") if self._tenanted else ("", "")
        ends = f"WHERE {self._open('a')} AND {self._open('b')} " if self._tenanted else ""
        return (
            f"CALL () {{ MATCH (d:{d}) {self._where_open('d')}RETURN count(d) AS documents }} "
            f"CALL () {{ MATCH (c:{c}) {self._where_open('c')}RETURN count(c) AS chunks, "
            f"count(CASE WHEN c.{embedding} IS NULL THEN 1 END) AS unembedded }} "
            f"CALL () {{ MATCH ({a}:{c})-[l:{from_doc}]->({b}:{d}) {ends}RETURN count(l) AS documentLinks }} "
            f"CALL () {{ MATCH ({a}:{c})-[l:{next_chunk}]->({b}:{c}) {ends}RETURN count(l) AS nextLinks }} "
            "RETURN documents, chunks, unembedded, documentLinks, nextLinks"
        )

    @functools.cached_property
    def blockers(self) -> dict[ErrorCode, str]:
        """One statement per blocker code: ``count`` and ``examples`` (``$listed`` at most)."""
        return {
            ErrorCode.CHUNK_WITHOUT_DOCUMENT: self._chunk_without_document,
            ErrorCode.CHUNK_IN_SEVERAL_DOCUMENTS: self._chunk_in_several_documents,
            ErrorCode.DOCUMENT_WITHOUT_PATH: self._document_without_path,
            ErrorCode.DUPLICATE_PATH: self._duplicate_path,
            ErrorCode.CHUNK_WITHOUT_INDEX: self._chunk_without_index,
            ErrorCode.CHUNK_WITHOUT_TEXT: self._chunk_without_text,
            ErrorCode.EMBEDDING_DIMENSIONS: self._embedding_dimensions,
            ErrorCode.OWNED_BY_RUN: self._owned_by_run,
            ErrorCode.PROPERTY_TAKEN: self._property_taken,
        }

    @property
    def _in_document(self) -> str:
        return f"(c)-[:{self.names.chunk_document.relationship_type}]->(:{self._d})"

    @property
    def _chunk_without_document(self) -> str:
        return (
            f"MATCH (c:{self._c}) WHERE NOT EXISTS {{ {self._in_document} }}{self._and_open('c')} "
            f"RETURN count(c) AS count, {_LISTED.format('elementId(c)')}"
        )

    @property
    def _chunk_in_several_documents(self) -> str:
        return (
            f"MATCH (c:{self._c}) WHERE COUNT {{ {self._in_document} }} > 1{self._and_open('c')} "
            f"RETURN count(c) AS count, {_LISTED.format('elementId(c)')}"
        )

    @property
    def _document_without_path(self) -> str:
        return (
            f"MATCH (d:{self._d}) WHERE {self._open('d') + ' AND (' if self._tenanted else ''}"
            f"d.{PATH_PROPERTY} IS NULL OR NOT d.{PATH_PROPERTY} IS :: STRING "
            f"OR trim(d.{PATH_PROPERTY}) = ''{')' if self._tenanted else ''} "
            f"RETURN count(d) AS count, {_LISTED.format('elementId(d)')}"
        )

    @property
    def _duplicate_path(self) -> str:
        return (
            f"MATCH (d:{self._d}) WHERE d.{PATH_PROPERTY} IS :: STRING NOT NULL{self._and_open('d')} "
            f"WITH d.{PATH_PROPERTY} AS path, count(d) AS n "
            f"WHERE n > 1 RETURN coalesce(sum(n), 0) AS count, {_LISTED.format('path')}"
        )

    @property
    def _chunk_without_index(self) -> str:
        from_doc, order = self.names.chunk_document.relationship_type, self.names.chunk.stored("order")
        return (
            f"MATCH (c:{self._c})-[:{from_doc}]->(d:{self._d}) {self._where_open('c')}"
            f"WITH d, c.{order} AS index, count(c) AS n "
            f"WHERE index IS NULL OR NOT index IS :: INTEGER OR n > 1 "
            f"RETURN coalesce(sum(n), 0) AS count, "
            f"{_LISTED.format(_INDEX_EXAMPLE)}"
        )

    @property
    def _chunk_without_text(self) -> str:
        text = self.names.chunk.stored("text")
        return (
            f"MATCH (c:{self._c}) WHERE {self._open('c') + ' AND (' if self._tenanted else ''}"
            f"c.{text} IS NULL OR NOT c.{text} IS :: STRING{')' if self._tenanted else ''} "
            f"RETURN count(c) AS count, {_LISTED.format('elementId(c)')}"
        )

    @property
    def _embedding_dimensions(self) -> str:
        embedding = self.names.chunk.stored("embedding")
        return (
            f"MATCH (c:{self._c}) WHERE c.{embedding} IS NOT NULL AND size(c.{embedding}) <> $dimensions"
            f"{self._and_open('c')} "
            f"RETURN count(c) AS count, {_LISTED.format('elementId(c)')}"
        )

    @property
    def _owned(self) -> str:
        run = self.names.run
        return f"EXISTS {{ MATCH (r:{run.label}) WHERE r.{run.key} = n.{self._run_id} }}"

    @property
    def _owned_by_run(self) -> str:
        return (
            f"MATCH (n) WHERE (n:{self._d} OR n:{self._c}) AND n.{self._run_id} IS NOT NULL AND {self._owned}"
            f"{self._and_open('n')} "
            f"RETURN count(n) AS count, {_LISTED.format('elementId(n)')}"
        )

    @property
    def _property_taken(self) -> str:
        run, run_id, d, c = self.names.run, self._run_id, self._d, self._c
        return (
            f"CALL () {{ MATCH (n:{d}) WHERE any(k IN keys(n) WHERE k IN $documentKeys){self._and_open('n')} "
            f"RETURN n AS e "
            f"UNION MATCH (n:{c}) WHERE any(k IN keys(n) WHERE k IN $chunkKeys){self._and_open('n')} RETURN n AS e }} "
            f"WITH e WHERE e.{run_id} IS NULL OR NOT EXISTS {{ MATCH (r:{run.label}) WHERE r.{run.key} = e.{run_id} }} "
            f"WITH collect(elementId(e)) AS nodes "
            f"CALL () {{ MATCH ({'s' if self._tenanted else ''}:{c})-[l:{self._links}]->() "
            f"WHERE l.{run_id} IS NOT NULL{self._and_open('s')} "
            f"RETURN collect(elementId(l)) AS links }} "
            f"RETURN size(nodes) + size(links) AS count, (nodes + links)[..$listed] AS examples"
        )

    @property
    def _chunk_rows(self) -> str:
        chunk = self.names.chunk
        order, text, embedding = chunk.stored("order"), chunk.stored("text"), chunk.stored("embedding")
        return (
            f"COLLECT {{ MATCH (c:{self._c})-[:{self.names.chunk_document.relationship_type}]->(d) "
            f"{self._where_open('c')}"
            f"RETURN {{element: elementId(c), index: c.{order}, text: c.{text}, embedded: c.{embedding} IS NOT NULL}} }}"
        )

    @functools.cached_property
    def chunks_of_paths(self) -> str:
        """``$paths``: each document of those paths with its chunks' ``index`` and ``text``."""
        return (
            f"UNWIND $paths AS path MATCH (d:{self._d}) WHERE d.{PATH_PROPERTY} = path{self._and_open('d')} "
            f"RETURN path, {self._chunk_rows} AS chunks"
        )

    @functools.cached_property
    def page(self) -> str:
        """``$limit`` documents without a key, by path: ``element``, ``path``, ``chunks``."""
        return (
            f"MATCH (d:{self._d}) WHERE d.{self.names.document.key} IS NULL{self._and_open('d')} "
            f"WITH d ORDER BY d.{PATH_PROPERTY} LIMIT $limit "
            f"RETURN elementId(d) AS element, d.{PATH_PROPERTY} AS path, {self._chunk_rows} AS chunks"
        )

    @functools.cached_property
    def set_documents(self) -> str:
        """``$rows`` of ``{element, props}``: a page's document properties."""
        return (
            f"UNWIND $rows AS row MATCH (d:{self._d}) WHERE elementId(d) = row.element{self._and_open('d')} "
            f"SET d += row.props{self._stamp.format(v='d')}"
        )

    @functools.cached_property
    def set_chunks(self) -> str:
        """``$rows`` of ``{element, props}``: a page's chunk properties."""
        return (
            f"UNWIND $rows AS row MATCH (c:{self._c}) WHERE elementId(c) = row.element{self._and_open('c')} "
            f"SET c += row.props{self._stamp.format(v='c')}"
        )

    @functools.cached_property
    def stamp_links(self) -> str:
        """``$elements`` (chunks), ``$run``: stamps their document and next-chunk links; ``links``."""
        from_doc, next_chunk = self.names.chunk_document.relationship_type, self.names.next_chunk.relationship_type
        return (
            f"UNWIND $elements AS element MATCH (c:{self._c}) WHERE elementId(c) = element{self._and_open('c')} "
            f"CALL (c) {{ MATCH (c)-[l:{from_doc}]->(:{self._d}) RETURN l "
            f"UNION MATCH (c)-[l:{next_chunk}]->(:{self._c}) RETURN l }} "
            f"SET l.{self._run_id} = $run RETURN count(l) AS links"
        )

    @functools.cached_property
    def undo_documents(self) -> str:
        """``$run``, ``$limit``: one page of document removals; ``removed``."""
        return _remove(
            f"(n:{self._d})", f"n.{self._run_id} = $run{self.names.tenant_and('n')}", "n", self.document_keys
        )

    @functools.cached_property
    def undo_chunks(self) -> str:
        """``$run``, ``$limit``: one page of chunk removals; ``removed``."""
        return _remove(f"(n:{self._c})", f"n.{self._run_id} = $run{self.names.tenant_and('n')}", "n", self.chunk_keys)

    @functools.cached_property
    def undo_links(self) -> str:
        """``$run``, ``$limit``: one page of link stamp removals; ``removed``."""
        # Tenanted, through the tenant's chunks: undo takes the links back first, while they carry it.
        chunk = "c" if self._tenanted else ""
        where = f"n.{self._run_id} = $run{self.names.tenant_and('c')}"
        return _remove(f"({chunk}:{self._c})-[n:{self._links}]->()", where, "n", (self._run_id,))

    @functools.cached_property
    def start_run(self) -> str:
        """``$rows``: the run node, created Running."""
        return self.names.run.create_statement(tenant=self._tenanted)

    @functools.cached_property
    def finish_run(self) -> str:
        """``$id``, ``$counts``: the run's status and counts, then completedAt."""
        run = self.names.run
        return f"MATCH (r:{run.label} {{{run.key}: $id{self.names.owned}}}) SET r += $counts, r.{run.stored('completed_at')} = datetime()"

    @functools.cached_property
    def run(self) -> str:
        """``$run``: ``fingerprint`` of that run (no row when there is none)."""
        run = self.names.run
        return f"MATCH (r:{run.label} {{{run.key}: $run{self.names.owned}}}) RETURN r.{run.stored('settings_fingerprint')} AS fingerprint"

    @functools.cached_property
    def delete_run(self) -> str:
        """``$run``: deletes the run node when nothing names it any more."""
        run, run_id = self.names.run, self._run_id
        return (
            f"MATCH (r:{run.label} {{{run.key}: $run{self.names.owned}}}) "
            f"WHERE NOT EXISTS {{ MATCH (n) WHERE (n:{self._d} OR n:{self._c}) AND n.{run_id} = $run }} "
            f"AND NOT EXISTS {{ MATCH (:{self._c})-[l:{self._links}]->() WHERE l.{run_id} = $run }} "
            "DELETE r RETURN count(r) AS deleted"
        )


_LISTED = "collect({})[..$listed] AS examples"


def _remove(pattern: str, where: str, var: str, keys: tuple[str, ...]) -> str:
    removed = ", ".join(f"{var}.{key}" for key in keys)
    return f"MATCH {pattern} WHERE {where} WITH {var} LIMIT $limit REMOVE {removed} RETURN count({var}) AS removed"
