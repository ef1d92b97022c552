"""Ingestion's statements, rendered once from one model's stored names.

Each :class:`Statement` carries the dotted name the store's hooks see
(``ingestion.lease.insert``, ``ingestion.document.chunks``, ...). Statements that run
inside a document's write transaction are named ``ingestion.document.*``; the
others (``ingestion.lease.*``, ``ingestion.run.*``, ``ingestion.state.*``) are
statements of their own. Every value is a parameter; labels, keys and types come
from :class:`~graphrag_orm.store.StoredNames`. Every returned column has an alias.
In a tenanted layout every node written is stamped with ``$tenant`` and every node
matched must be the tenant's (:attr:`StoredNames.owned`); untenanted, the text is as it was.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphrag_orm.store import StoredNames
from graphrag_orm.tenancy import TENANT_PARAMETER, TENANT_PROPERTY

__all__ = ["STATE_FIELDS", "DocumentStatements", "LeaseStatements", "RunStatements", "Statement"]

#: What decides that a stored document is unchanged, read back under these aliases.
STATE_FIELDS = ("content_hash", "settings_fingerprint", "title", "published", "publisher", "url", "text_origin")


@dataclass(frozen=True)
class Statement:
    """Cypher and the name its hook events carry."""

    name: str
    cypher: str


def _state_projection(names: StoredNames, variable: str) -> str:
    document = names.document
    return ", ".join(f"{variable}.{document.stored(field)} AS {field}" for field in STATE_FIELDS)


_EXPIRY = "datetime() + duration({milliseconds: $ms})"


def _touch(names: StoredNames) -> str:
    """Match ``$key``'s lease and write it before anything reads it, so the statement holds its write lock."""
    lease = names.lease
    claims = lease.stored("claims")
    return f"MATCH (l:{lease.label} {{{lease.key}: $key{names.owned}}}) SET l.{claims} = coalesce(l.{claims}, 0) + 1 WITH l"


def _renewal(names: StoredNames) -> str:
    """Renew ``$key``'s lease for ``$ms`` when ``$run`` holds it unexpired; ``l`` is it, or no row."""
    lease = names.lease
    run, expires = lease.stored("run_id"), lease.stored("expires_at")
    return f"{_touch(names)} WHERE l.{run} = $run AND l.{expires} > datetime() SET l.{expires} = {_EXPIRY}"


@dataclass(frozen=True)
class LeaseStatements:
    """Take, renew, release and sweep leases (see :mod:`graphrag_orm.ingestion.leases` for why each is so)."""

    #: ``$key``, ``$run``, ``$ms``; continues with the lease's ``then`` read.
    insert: Statement
    #: Takes an expired lease over; no row when it is held. Continues with ``then``.
    takeover: Statement
    #: ``renewed`` is 1 when this run still held the lease unexpired, else 0.
    renew: Statement
    #: The same renewal, first inside a document's write transaction.
    renew_in_write: Statement
    #: ``$key``, ``$run``: deletes this run's lease only.
    release: Statement
    #: ``$keys``: deletes those of them that expired; ``swept``.
    sweep: Statement

    @classmethod
    def render(cls, names: StoredNames, then: str = "RETURN 1 AS held") -> LeaseStatements:
        """``then`` reads in the acquiring statement once the lease is held (``l`` and ``$key`` in scope)."""
        lease = names.lease
        label, key = lease.label, lease.key
        run, expires, claims = lease.stored("run_id"), lease.stored("expires_at"), lease.stored("claims")
        touch, owned = _touch(names), names.owned
        stamp = f", l.{TENANT_PROPERTY} = ${TENANT_PARAMETER}" if names.tenanted else ""
        renew = f"{_renewal(names)} RETURN count(l) AS renewed"
        return cls(
            insert=Statement(
                "ingestion.lease.insert",
                f"CREATE (l:{label}) SET l.{key} = $key, l.{run} = $run, l.{claims} = 0, l.{expires} = {_EXPIRY}{stamp} "
                f"WITH l {then}",
            ),
            takeover=Statement(
                "ingestion.lease.takeover",
                f"{touch} WHERE l.{expires} <= datetime() SET l.{run} = $run, l.{expires} = {_EXPIRY} WITH l {then}",
            ),
            renew=Statement("ingestion.lease.renew", renew),
            renew_in_write=Statement("ingestion.document.renew_lease", renew),
            release=Statement(
                "ingestion.lease.release", f"MATCH (l:{label} {{{key}: $key, {run}: $run{owned}}}) DELETE l"
            ),
            sweep=Statement(
                "ingestion.lease.sweep",
                f"UNWIND $keys AS key MATCH (l:{label} {{{key}: key{owned}}}) SET l.{claims} = coalesce(l.{claims}, 0) + 1 "
                f"WITH l WHERE l.{expires} <= datetime() DELETE l RETURN count(l) AS swept",
            ),
        )


@dataclass(frozen=True)
class RunStatements:
    """The run node: created Running, finished with its counts."""

    #: ``$rows``: one run row.
    start: Statement
    #: ``$id``, ``$counts`` (stored names to values); stamps the completion time.
    finish: Statement
    #: ``$id``, ``$running``: stamps the run's progress while it is Running; ``beat`` is 1, else 0.
    heartbeat: Statement

    @classmethod
    def render(cls, names: StoredNames) -> RunStatements:
        run, owned = names.run, names.owned
        return cls(
            heartbeat=Statement(
                "ingestion.run.heartbeat",
                f"MATCH (r:{run.label} {{{run.key}: $id{owned}}}) WHERE r.{run.stored('status')} = $running "
                f"SET r.{run.stored('progress_at')} = datetime() RETURN count(r) AS beat",
            ),
            start=Statement("ingestion.run.start", run.create_statement(tenant=names.tenanted)),
            finish=Statement(
                "ingestion.run.finish",
                f"MATCH (r:{run.label} {{{run.key}: $id{owned}}}) SET r += $counts, r.{run.stored('completed_at')} = datetime()",
            ),
        )


@dataclass(frozen=True)
class DocumentStatements:
    """What is read about stored documents, and one document's writes in its transaction."""

    #: ``$ids``: ``document`` and the :data:`STATE_FIELDS` of each stored one.
    prefetch_states: Statement
    #: ``$ids``: of each one stored or leased, ``document``, ``leased``, ``live`` (the lease
    #: is unexpired) and the :data:`STATE_FIELDS` (nulls when not stored); reads only.
    window_states: Statement
    #: ``$id``: the :data:`STATE_FIELDS` of one document (no row when absent).
    state: Statement
    #: The lease's ``then``: the :data:`STATE_FIELDS` of ``$key`` (nulls when absent).
    state_under_lease: str
    #: ``$document``: the previous version's structural edges, then its chunks and sections.
    delete_previous: Statement
    #: ``$rows``: the document, upserted by key.
    upsert_document: Statement
    #: ``$rows`` of ``{props, target, edge}``: sections with their edge to the document.
    sections: Statement
    #: ``$rows`` of ``{props, target, edge}``: chunks with their edge to the document.
    chunks: Statement
    #: ``$rows`` of ``{source, target, props}``: chunk to section edges.
    chunk_sections: Statement
    #: ``$rows`` of ``{source, target, props}``: chunk to next chunk edges.
    next_chunks: Statement
    #: ``$rows`` of ``{source, target, props}``: section to parent section edges.
    subsections: Statement
    #: A new document's whole write in one statement, one round trip: the lease renewal
    #: (``$key``, ``$run``, ``$ms``), then, only when it renewed, the upsert and the creates
    #: above with ``$document``, ``$sections``, ``$chunks``, ``$chunk_sections``,
    #: ``$next_chunks``, ``$subsections`` (one slice each); ``renewed`` is 1, or no row.
    write_new: Statement

    @classmethod
    def render(cls, names: StoredNames) -> DocumentStatements:
        document, chunk, section, lease = names.document, names.chunk, names.section, names.lease
        owned, tenant = names.owned, names.tenanted
        chunk_doc, section_doc = chunk.stored("document_id"), section.stored("document_id")
        chunk_types = "|".join(
            e.relationship_type for e in (names.chunk_document, names.chunk_section, names.next_chunk)
        )
        section_types = "|".join(e.relationship_type for e in (names.section_document, names.subsection))
        # Edges first, then nodes, all found by the document's key; never DETACH DELETE, so
        # an edge the toolkit does not own fails the write instead of vanishing.
        delete_previous = (
            f"CALL () {{ MATCH (c:{chunk.label} {{{chunk_doc}: $document{owned}}})-[r:{chunk_types}]->() DELETE r }} "
            f"CALL () {{ MATCH (s:{section.label} {{{section_doc}: $document{owned}}})-[r:{section_types}]->() DELETE r }} "
            f"CALL () {{ MATCH (c:{chunk.label} {{{chunk_doc}: $document{owned}}}) DELETE c }} "
            f"CALL () {{ MATCH (s:{section.label} {{{section_doc}: $document{owned}}}) DELETE s }}"
        )
        match_one = f"MATCH (d:{document.label} {{{document.key}: $id{owned}}})"
        writes = (
            document.upsert_statement("document", tenant=tenant),
            section.create_linked_statement(names.section_document, "sections", tenant=tenant),
            chunk.create_linked_statement(names.chunk_document, "chunks", tenant=tenant),
            names.chunk_section.create_statement("chunk_sections", tenant=tenant),
            names.next_chunk.create_statement("next_chunks", tenant=tenant),
            names.subsection.create_statement("subsections", tenant=tenant),
        )
        # Unit subqueries keep the one row; a lease not renewed leaves no row, so nothing is written.
        write_new = (
            f"{_renewal(names)} WITH count(l) AS renewed WHERE renewed = 1 "
            + " ".join(f"CALL () {{ {part} }}" for part in writes)
            + " RETURN renewed"
        )
        return cls(
            prefetch_states=Statement(
                "ingestion.state.prefetch",
                f"UNWIND $ids AS id MATCH (d:{document.label} {{{document.key}: id{owned}}}) "
                f"RETURN id AS document, {_state_projection(names, 'd')}",
            ),
            window_states=Statement(
                "ingestion.state.window",
                f"UNWIND $ids AS id OPTIONAL MATCH (d:{document.label} {{{document.key}: id{owned}}}) "
                f"OPTIONAL MATCH (l:{lease.label} {{{lease.key}: id{owned}}}) WITH id, d, l WHERE d IS NOT NULL OR l IS NOT NULL "
                f"RETURN id AS document, l IS NOT NULL AS leased, "
                f"coalesce(l.{lease.stored('expires_at')} > datetime(), false) AS live, {_state_projection(names, 'd')}",
            ),
            state=Statement("ingestion.state.read", f"{match_one} RETURN {_state_projection(names, 'd')}"),
            state_under_lease=(
                f"OPTIONAL MATCH (d:{document.label} {{{document.key}: $key{owned}}}) RETURN {_state_projection(names, 'd')}"
            ),
            delete_previous=Statement("ingestion.document.delete_previous", delete_previous),
            upsert_document=Statement("ingestion.document.upsert", document.upsert_statement(tenant=tenant)),
            sections=Statement(
                "ingestion.document.sections",
                section.create_linked_statement(names.section_document, tenant=tenant),
            ),
            chunks=Statement(
                "ingestion.document.chunks", chunk.create_linked_statement(names.chunk_document, tenant=tenant)
            ),
            chunk_sections=Statement(
                "ingestion.document.chunk_sections", names.chunk_section.create_statement(tenant=tenant)
            ),
            next_chunks=Statement("ingestion.document.next_chunks", names.next_chunk.create_statement(tenant=tenant)),
            subsections=Statement("ingestion.document.subsections", names.subsection.create_statement(tenant=tenant)),
            write_new=Statement("ingestion.document.write", write_new),
        )
