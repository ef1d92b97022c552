"""Every statement the retriever sends, rendered once from a lexical model's stored names.

Statements return named columns, and chunks and documents as map projections read by
key (``c {.id, .text, ...}``), never by position; embeddings are never projected.
Labels, relationship types and index names come from the layout (validated
identifiers); every value is a parameter. Statement names (``retrieval.*``) are what
the store's hooks see.

The retrieval's own statement (:meth:`RetrievalStatements.evidence`) is the routes'
subqueries, each returning ``[{id, score}]`` best first with ties by chunk id, then
fusion (:func:`~graphrag_orm.retrieval.fusion.fuse_clause`), then the winners' fields,
their documents' and their neighbours': one round trip. With the graph route, whose
anchors are the other routes' top chunks, the same is split in two around it:
:meth:`~RetrievalStatements.search`, then :meth:`~RetrievalStatements.fuse`.

In a tenanted layout (docs/tenancy.md) every read is the bound tenant's, in the same
statement: the vector index filters by ``$tenant`` inside the index (its declared filter
property), the full-text route keeps the tenant's chunks of an over-fetch, and every node
matched by key, every scope, neighbour and document must carry ``$tenant``. Untenanted,
the text of every statement is what it was.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from graphrag_orm.evidence import GROUNDING_PROPERTY
from graphrag_orm.models import LexicalModel
from graphrag_orm.ontology import Ontology
from graphrag_orm.retrieval.fusion import fuse_clause, hits_of
from graphrag_orm.store.names import StoredNames
from graphrag_orm.tenancy import TENANT_PARAMETER, TENANT_PROPERTY


class SearchPart(Protocol):
    """What the statements read of a route's search (:class:`~graphrag_orm.retrieval.routes.RouteSearch`):
    its route's name, its column and its subquery (None: nothing to search)."""

    @property
    def route(self) -> str: ...

    @property
    def column(self) -> str: ...

    @property
    def subquery(self) -> str | None: ...


__all__ = ["CHUNK_FIELDS", "DOCUMENT_FIELDS", "METADATA_FIELDS", "GraphStatements", "RetrievalStatements"]

#: The keys of a projected chunk besides ``id`` (its key), each with the chunk attribute it reads.
CHUNK_FIELDS: Mapping[str, str] = {
    "documentId": "document_id",
    "text": "text",
    "startByte": "start_byte",
    "endByte": "end_byte",
    "order": "order",
}
#: The keys of a projected document, each with the document attribute it reads.
DOCUMENT_FIELDS: Mapping[str, str] = {
    "sourceUri": "source_uri",
    "title": "title",
    "pageStarts": "page_starts",
    "textOrigin": "text_origin",
}
#: A metadata filter's fields: the document attribute, the comparison and the parameter.
METADATA_FIELDS: Mapping[str, tuple[str, str, str]] = {
    "publisher": ("publisher", "=", "publisher"),
    "media_type": ("media_type", "=", "mediaType"),
    "uri_prefix": ("source_uri", "STARTS WITH", "uriPrefix"),
    "published_from": ("published", ">=", "publishedFrom"),
    "published_before": ("published", "<", "publishedBefore"),
}


#: The column beside a search's hits holding how many its index returned before the filter.
FOUND_SUFFIX = "Found"


def _found(search: SearchPart) -> tuple[str, ...]:
    """The search's found column, when it counts one (``counts_found``: a tenanted full-text search)."""
    return (f"{search.column}{FOUND_SUFFIX}",) if getattr(search, "counts_found", False) else ()


def _project(var: str, fields: Mapping[str, str]) -> str:
    """``var {.a, b: var.c}``: each key from its stored property."""
    entries = [f".{stored}" if key == stored else f"{key}: {var}.{stored}" for key, stored in fields.items()]
    return f"{var} {{{', '.join(entries)}}}"


def in_scope(names: StoredNames, var: str) -> str:
    """A condition on chunk ``var``: inside ``$whole`` documents or one of ``$ranges``."""
    doc, start, end = (names.chunk.stored(a) for a in ("document_id", "start_byte", "end_byte"))
    return (
        f"({var}.{doc} IN $whole OR any(r IN $ranges WHERE r.documentId = {var}.{doc} "
        f"AND {var}.{start} >= r.startByte AND {var}.{end} <= r.endByte))"
    )


@dataclass(frozen=True)
class RetrievalStatements:
    """The routes', fusion's, projection's and scope's statements of one model and index pair."""

    names: StoredNames
    vector_index: str
    fulltext_index: str
    #: The embedding set's similarity function name (``cosine``, ``euclidean``).
    similarity: str
    _rendered: dict[tuple[object, ...], str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, model: LexicalModel, vector_index: str, fulltext_index: str, similarity: str) -> RetrievalStatements:
        return cls(model.names, vector_index, fulltext_index, similarity)

    def _chunk(self, var: str) -> str:
        ch = self.names.chunk
        # grounding: absent (Source) on ingested chunks, "Chunk" on adopted ones no source placed.
        fields = {
            "id": ch.key,
            **{key: ch.stored(a) for key, a in CHUNK_FIELDS.items()},
            "grounding": GROUNDING_PROPERTY,
        }
        return _project(var, fields)

    @functools.cached_property
    def _document(self) -> str:
        return _project("d", {key: self.names.document.stored(a) for key, a in DOCUMENT_FIELDS.items()})

    @functools.cached_property
    def scope_chunks(self) -> str:
        """A subquery returning every chunk ``c`` of the resolved scope (``$whole``, ``$ranges``)."""
        ch = self.names.chunk
        doc, start, end = ch.stored("document_id"), ch.stored("start_byte"), ch.stored("end_byte")
        owned = self.names.owned
        return (
            f"CALL () {{ UNWIND $whole AS doc MATCH (c:{ch.label} {{{doc}: doc{owned}}}) RETURN c "
            f"UNION UNWIND $ranges AS r MATCH (c:{ch.label} {{{doc}: r.documentId{owned}}}) "
            f"WHERE c.{start} >= r.startByte AND c.{end} <= r.endByte RETURN c }} "
        )

    def _route(self, search: str, column: str, *, filtered: bool = False, limited: bool = False) -> str:
        """A route's subquery: ``search`` yields chunks ``c`` and their ``score``; the hits are
        ``column``, best first, ties by chunk id; ``filtered`` keeps those inside the scope,
        ``limited`` the best ``$k``."""
        where = f"WITH c, score WHERE {in_scope(self.names, 'c')} " if filtered else ""
        limit = " LIMIT $k" if limited else ""
        return (
            f"CALL () {{ {search}{where}WITH c.{self.names.chunk.key} AS id, score ORDER BY score DESC, id{limit} "
            f"RETURN collect({{id: id, score: score}}) AS {column} }} "
        )

    @functools.cached_property
    def _vector_search(self) -> str:
        # A tenanted graph's index declares tenant: the index filters before its top $vectorFetch.
        tenant = f"WHERE c.{TENANT_PROPERTY} = ${TENANT_PARAMETER} " if self.names.tenanted else ""
        return (
            f"MATCH (c:{self.names.chunk.label}) "
            f"SEARCH c IN (VECTOR INDEX {self.vector_index} FOR $vector {tenant}LIMIT $vectorFetch) SCORE AS score "
        )

    @functools.cached_property
    def vector(self) -> str:
        """The vector index's ``$vectorFetch`` nearest chunks to ``$vector``, as ``vector``."""
        return self._route(self._vector_search, "vector")

    @functools.cached_property
    def vector_over_fetch(self) -> str:
        """The index's ``$vectorFetch`` nearest, filtered to the scope, best ``$k`` kept."""
        return self._route(self._vector_search, "vector", filtered=True, limited=True)

    @functools.cached_property
    def vector_in_index(self) -> str:
        """The index's ``$k`` nearest among the chunks of ``$whole`` documents, filtered inside the
        index (its declared document id property; Neo4j 2026's ``SEARCH ... WHERE``)."""
        doc = self.names.chunk.stored("document_id")
        search = (
            f"MATCH (c:{self.names.chunk.label}) "
            f"SEARCH c IN (VECTOR INDEX {self.vector_index} FOR $vector "
            f"WHERE c.{doc} IN $whole{self.names.tenant_and('c')} LIMIT $k) "
            "SCORE AS score "
        )
        return self._route(search, "vector")

    @functools.cached_property
    def vector_filter_properties(self) -> str:
        """``retrieval.scope.vector_filter``: the properties the vector index declares (the embedding first)."""
        return "SHOW VECTOR INDEXES YIELD name, properties WHERE name = $name RETURN properties"

    @functools.cached_property
    def vector_exact(self) -> str:
        """Every chunk of the scope scored exactly against ``$vector``, best ``$k`` kept."""
        embedding = self.names.chunk.stored("embedding")
        search = (
            f"{self.scope_chunks}WITH c WHERE c.{embedding} IS NOT NULL "
            f"WITH c, vector.similarity.{self.similarity}(c.{embedding}, $vector) AS score "
        )
        return self._route(search, "vector", limited=True)

    @functools.cached_property
    def _full_text_search(self) -> str:
        return (
            "CALL db.index.fulltext.queryNodes($fullTextIndex, $query, {limit: $fullTextFetch}) YIELD node AS c, score "
        )

    @functools.cached_property
    def tenant_lucene(self) -> str:
        """A Cypher expression: ``$query`` on the chunk text field, AND the tenant's phrase on the
        index's tenant field, boosted 0 so it filters without scoring (a tenanted layout's full-text
        index covers both, docs/tenancy.md). The tenant id's characters (``[A-Za-z0-9._:@-]``) need
        no escaping inside a Lucene phrase."""
        text = self.names.chunk.stored("text")
        return f"'{text}:(' + $query + ') AND {TENANT_PROPERTY}:\"' + ${TENANT_PARAMETER} + '\"^0'"

    def _tenant_full_text(self, *, filtered: bool) -> str:
        """The tenanted full-text route: the index filtered by the tenant's phrase, then exactly by
        ``$tenant`` (and the scope), best ``$k`` kept as ``fullText``; ``fullTextFound`` is how many
        the index returned, so a fetch filled by ids sharing the tenant's words is told apart from
        a tenant with fewer matches."""
        scope = f" AND {in_scope(self.names, 'c')}" if filtered else ""
        return (
            f"CALL () {{ CALL db.index.fulltext.queryNodes($fullTextIndex, {self.tenant_lucene}, "
            "{limit: $fullTextFetch}) YIELD node, score WITH collect({c: node, score: score}) AS found "
            "CALL (found) { UNWIND found AS row WITH row.c AS c, row.score AS score "
            f"WHERE c.{TENANT_PROPERTY} = ${TENANT_PARAMETER}{scope} "
            f"WITH c.{self.names.chunk.key} AS id, score ORDER BY score DESC, id LIMIT $k "
            "RETURN collect({id: id, score: score}) AS kept } "
            f"RETURN kept AS fullText, size(found) AS fullText{FOUND_SUFFIX} }} "
        )

    @functools.cached_property
    def full_text(self) -> str:
        """The full-text index's ``$fullTextFetch`` best chunks for ``$query``, as ``fullText``; in a
        tenanted layout, the tenant's (filtered inside the index, then exactly), best ``$k`` kept."""
        if self.names.tenanted:
            return self._tenant_full_text(filtered=False)
        return self._route(self._full_text_search, "fullText")

    @functools.cached_property
    def full_text_over_fetch(self) -> str:
        """The index's ``$fullTextFetch`` best, filtered to the scope (and the tenant), best ``$k`` kept."""
        if self.names.tenanted:
            return self._tenant_full_text(filtered=True)
        return self._route(self._full_text_search, "fullText", filtered=True, limited=True)

    def _rendered_once(self, key: tuple[object, ...], render: Callable[[], str]) -> str:
        text = self._rendered.get(key)
        if text is None:
            text = self._rendered[key] = render()
        return text

    @staticmethod
    def _routes(searches: Sequence[SearchPart]) -> str:
        """Each search's subquery, or an empty list in its column (and 0 found) when it has nothing to search."""
        return "".join(
            s.subquery or f"CALL () {{ RETURN [] AS {s.column}{''.join(f', 0 AS {c}' for c in _found(s))} }} "
            for s in searches
        )

    def _projection(self, hops: int) -> str:
        """``items``: each of ``top``'s chunk, document, score, ranks and neighbours up to ``hops``."""
        ch, doc, owned = self.names.chunk, self.names.document, self.names.owned
        neighbours, value = "", "[]"
        if hops:
            # hops is a validated int 1..4: a variable-length bound cannot be a parameter.
            step = f"[:{self.names.next_chunk.relationship_type}*1..{int(hops)}]"
            neighbours = (
                f"CALL (c) {{ CALL (c) {{ MATCH (c)-{step}->(n:{ch.label}) {self.names.tenant_where('n')}RETURN n "
                f"UNION MATCH (n:{ch.label})-{step}->(c) {self.names.tenant_where('n')}RETURN n }} "
                f"RETURN collect({self._chunk('n')}) AS neighbours }} "
            )
            value = "neighbours"
        return (
            f"CALL (top) {{ UNWIND top AS hit MATCH (c:{ch.label} {{{ch.key}: hit.id{owned}}}) "
            f"OPTIONAL MATCH (d:{doc.label} {{{doc.key}: c.{ch.stored('document_id')}{owned}}}) {neighbours}"
            f"RETURN collect({{chunk: {self._chunk('c')}, document: {self._document}, score: hit.score, "
            f"ranks: hit.ranks, neighbours: {value}}}) AS items }} "
        )

    @functools.cached_property
    def _fuse(self) -> str:
        return fuse_clause(self.names)

    def evidence(self, searches: Sequence[SearchPart], hops: int) -> str:
        """``retrieval.evidence``: the routes' searches, fusion and the winners' projection in one statement.

        Returns one row: ``kept`` (how many hits each search kept, by column; the items
        carry every route's rank), ``total`` (chunks fused) and ``items`` (the top
        ``$maxItems``, best first). Parameters: the searches', ``$hits`` (the ranked hits of
        routes that read for themselves), ``$fusion``, ``$rrf``, ``$sharedVotes``, ``$maxItems`` and
        ``$reserved``.
        """
        key = ("evidence", tuple((s.route, s.column, s.subquery) for s in searches), hops)

        def render() -> str:
            kept = ", ".join(
                [f"{s.column}: size({s.column})" for s in searches] + [f"{c}: {c}" for s in searches for c in _found(s)]
            )
            hits = " + ".join([*(hits_of(s.column, s.route) for s in searches), "$hits"])
            return (
                f"{self._routes(searches)}WITH {{{kept}}} AS kept, {hits} AS hits "
                f"{self._fuse}{self._projection(hops)}RETURN kept, total, items"
            )

        return self._rendered_once(key, render)

    def search(self, searches: Sequence[SearchPart]) -> str:
        """``retrieval.search``: the searches only; one row with each search's hits in its column."""
        key = ("search", tuple((s.route, s.column, s.subquery) for s in searches))
        return self._rendered_once(
            key,
            lambda: f"{self._routes(searches)}RETURN {', '.join(c for s in searches for c in (s.column, *_found(s)))}",
        )

    def fuse(self, hops: int) -> str:
        """``retrieval.fuse``: fusion of ``$hits`` and the winners' projection; one row of ``total`` and ``items``."""
        return self._rendered_once(
            ("fuse", hops), lambda: f"WITH $hits AS hits {self._fuse}{self._projection(hops)}RETURN total, items"
        )

    @functools.cached_property
    def existing_documents(self) -> str:
        """``retrieval.scope.documents``: which of ``$ids`` are documents, the first ``$limit`` by id."""
        d = self.names.document
        return (
            f"UNWIND $ids AS key MATCH (d:{d.label} {{{d.key}: key{self.names.owned}}}) "
            f"RETURN d.{d.key} AS id ORDER BY id LIMIT $limit"
        )

    @functools.cached_property
    def named(self) -> str:
        """``retrieval.expansion.named``: which of ``$values`` are the key of a document, section or
        chunk, each with its document and byte span (null for a document)."""
        d, s, c, owned = self.names.document, self.names.section, self.names.chunk, self.names.owned
        spans = [
            f"MATCH (n:{node.label} {{{node.key}: value{owned}}}) RETURN n.{node.stored('document_id')} AS documentId, "
            f"n.{node.stored('start_byte')} AS startByte, n.{node.stored('end_byte')} AS endByte"
            for node in (s, c)
        ]
        return (
            f"UNWIND $values AS value CALL (value) {{ MATCH (n:{d.label} {{{d.key}: value{owned}}}) "
            f"RETURN n.{d.key} AS documentId, null AS startByte, null AS endByte "
            f"UNION ALL {spans[0]} UNION ALL {spans[1]} }} "
            "RETURN value, documentId, startByte, endByte"
        )

    @functools.cached_property
    def sections(self) -> str:
        """``retrieval.scope.sections``: the document and byte span of each of ``$ids``."""
        s = self.names.section
        return (
            f"UNWIND $ids AS key MATCH (s:{s.label} {{{s.key}: key{self.names.owned}}}) "
            f"RETURN s.{s.stored('document_id')} AS documentId, s.{s.stored('start_byte')} AS startByte, "
            f"s.{s.stored('end_byte')} AS endByte"
        )

    def metadata(self, fields: tuple[str, ...]) -> str:
        """``retrieval.scope.metadata``: documents matching every filter field in ``fields``, by id."""
        key = ("metadata", fields)
        if key not in self._rendered:
            d = self.names.document
            conditions = [
                f"d.{d.stored(attribute)} {operator} ${parameter}"
                for attribute, operator, parameter in (METADATA_FIELDS[name] for name in fields)
            ]
            if self.names.tenanted:
                conditions.append(f"d.{TENANT_PROPERTY} = ${TENANT_PARAMETER}")
            where = f"WHERE {' AND '.join(conditions)} " if conditions else ""
            self._rendered[key] = f"MATCH (d:{d.label}) {where}RETURN d.{d.key} AS id ORDER BY id LIMIT $limit"
        return self._rendered[key]

    @functools.cached_property
    def scope_size(self) -> str:
        """``retrieval.scope.size``: ``chunks`` in the scope and ``total`` chunks in the graph (the
        tenant's, in a tenanted layout: a tenant learns no count of another's)."""
        owned = f" {{{TENANT_PROPERTY}: ${TENANT_PARAMETER}}}" if self.names.tenanted else ""
        return (
            f"CALL () {{ {self.scope_chunks}RETURN count(c) AS chunks }} "
            f"CALL () {{ MATCH (c:{self.names.chunk.label}{owned}) RETURN count(c) AS total }} RETURN chunks, total"
        )


@dataclass(frozen=True)
class GraphStatements:
    """The graph route's statements for one model and ontology."""

    names: StoredNames
    names_index: str
    fact_types: str
    mention: str

    @classmethod
    def of(cls, model: LexicalModel, ontology: Ontology) -> GraphStatements:
        return cls(
            model.names, ontology.names_index_name(model.layout), "|".join(ontology.fact_types), ontology.mention_type
        )

    def _theirs(self, variable: str) -> str:
        """`` AND v.tenant = $tenant`` in a tenanted layout (a thing or a fact's other end); else nothing."""
        return self.names.tenant_and(variable)

    @functools.cached_property
    def anchors_by_chunks(self) -> str:
        """``retrieval.graph.anchors.chunks``: things mentioned in ``$ids``, the earliest chunk first."""
        ch = self.names.chunk
        thing = f"WHERE t.{TENANT_PROPERTY} = ${TENANT_PARAMETER} " if self.names.tenanted else ""
        return (
            f"UNWIND range(0, size($ids) - 1) AS position "
            f"MATCH (c:{ch.label} {{{ch.key}: $ids[position]{self.names.owned}}})<-[:{self.mention}]-(t) {thing}"
            "WITH t, min(position) AS first RETURN elementId(t) AS thing ORDER BY first, thing LIMIT $k"
        )

    @functools.cached_property
    def anchors_by_names(self) -> str:
        """``retrieval.graph.anchors.names``: things whose names match ``$query``, best first.

        In a tenanted layout the names index covers ``tenant``: ``$query`` is asked of the name
        and alias fields AND the tenant's phrase of the tenant field (boosted 0: it filters, it
        adds nothing to the score), and each hit's ``tenant`` is then checked exactly: one row,
        ``found`` (the index's hits) and ``kept`` (the tenant's, ``{thing, score}`` maps)."""
        if not self.names.tenanted:
            return (
                "CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score "
                "RETURN elementId(node) AS thing ORDER BY score DESC, thing"
            )
        lucene = (
            "'(name:(' + $query + ') OR aliases:(' + $query + ')) AND "
            f"{TENANT_PROPERTY}:\"' + ${TENANT_PARAMETER} + '\"^0'"
        )
        return (
            f"CALL db.index.fulltext.queryNodes($index, {lucene}, {{limit: $k}}) YIELD node, score "
            f"WITH collect({{thing: elementId(node), score: score, mine: node.{TENANT_PROPERTY} = ${TENANT_PARAMETER}}}) "
            "AS hits RETURN size(hits) AS found, [h IN hits WHERE h.mine | {thing: h.thing, score: h.score}] AS kept"
        )

    @functools.cached_property
    def degree(self) -> str:
        """``retrieval.graph.degree``: each of ``$ids``'s number of facts (a tenant's: to its things)."""
        if not self.names.tenanted:
            return (
                "UNWIND $ids AS id MATCH (t) WHERE elementId(t) = id "
                f"RETURN id AS thing, COUNT {{ (t)-[:{self.fact_types}]-() }} AS degree"
            )
        return (
            f"UNWIND $ids AS id MATCH (t) WHERE elementId(t) = id{self._theirs('t')} "
            f"RETURN id AS thing, COUNT {{ (t)-[:{self.fact_types}]-(o) WHERE o.{TENANT_PROPERTY} = ${TENANT_PARAMETER} }}"
            " AS degree"
        )

    @functools.cached_property
    def expand(self) -> str:
        """``retrieval.graph.expand``: facts touching ``$frontier``, in the frontier's order, at most ``$limit``.

        In a tenanted layout the frontier thing, the fact's other end and the things counted
        for its degree must all be the tenant's: a fact to another tenant's thing is never walked."""
        if not self.names.tenanted:
            degree = f"COUNT {{ (other)-[:{self.fact_types}]-() }}"
            other = ""
        else:
            degree = f"COUNT {{ (other)-[:{self.fact_types}]-(o) WHERE o.{TENANT_PROPERTY} = ${TENANT_PARAMETER} }}"
            other = f" WHERE other.{TENANT_PROPERTY} = ${TENANT_PARAMETER}"
        return (
            "UNWIND range(0, size($frontier) - 1) AS position "
            f"MATCH (t) WHERE elementId(t) = $frontier[position]{self._theirs('t')} "
            f"MATCH (t)-[f:{self.fact_types}]-(other){other} "
            f"WITH f, other, min(position) AS origin, {degree} AS degree "
            "RETURN elementId(f) AS fact, type(f) AS factType, startNode(f).name AS source, "
            "endNode(f).name AS target, elementId(other) AS other, degree "
            "ORDER BY origin, factType, fact LIMIT $limit"
        )

    @functools.cached_property
    def grounding(self) -> str:
        """``retrieval.graph.grounding``: per fact of ``$ids``, up to ``$perFact`` chunks mentioning both ends."""
        return self._grounding(scoped=False)

    @functools.cached_property
    def grounding_scoped(self) -> str:
        """The same, of chunks inside the scope (``$whole``, ``$ranges``) only."""
        return self._grounding(scoped=True)

    def _grounding(self, *, scoped: bool) -> str:
        ch = self.names.chunk
        condition = f" AND {in_scope(self.names, 'c')}" if scoped else ""
        return (
            f"UNWIND $ids AS id MATCH (a)-[f]->(b) WHERE elementId(f) = id{self._theirs('a')}{self._theirs('b')} "
            f"MATCH (a)-[:{self.mention}]->(c:{ch.label})<-[:{self.mention}]-(b) "
            f"WHERE c.{ch.stored('document_id')} IN f.documentIds{condition}{self.names.tenant_and('c')} "
            f"WITH id, c ORDER BY c.{ch.key} "
            f"RETURN id AS fact, collect(DISTINCT c.{ch.key})[..$perFact] AS chunks"
        )
