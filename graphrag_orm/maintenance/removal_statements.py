"""The statements of the batched remover, rendered once from the stored names.

Every statement returns named columns. ``$ids`` are the batch's document ids (for
leases, their keys, which are document ids); ``$page`` bounds the elements one
statement touches. Links are named by the kind of their source and their type
(``"chunks IN_DOCUMENT"``) and deleted from their source, so each is found once.

In a tenanted layout (docs/tenancy.md) every node a statement finds, surveys or deletes
is the bound tenant's (``$tenant``, in the same statement): its documents, sections,
chunks, leases and runs; a structural link to another tenant's node counts as crossing
(refused), and a run id names a run only when the run is the tenant's. The retraction of
community findings and the community deletes find the tenant's findings, reports and
communities only. Untenanted, every statement is what it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphrag_orm.models import HAS_FINDING
from graphrag_orm.store import StoredNames

__all__ = [
    "NODE_KINDS",
    "SOURCE_KINDS",
    "RemovalStatements",
    "RetractionStatements",
    "delete_communities",
    "delete_reports",
]


def delete_communities(label: str, tenanted: bool = False) -> str:
    """``$page``: delete that many communities (graphrag_orm.communities) with their links; ``removed``.
    ``tenanted``: the tenant's only."""
    own = " {tenant: $tenant}" if tenanted else ""
    return f"MATCH (c:{label}{own}) WITH c LIMIT $page CALL (c) {{ DETACH DELETE c }} RETURN count(*) AS removed"


def delete_reports(finding_label: str, report_label: str, tenanted: bool = False) -> tuple[str, str]:
    """``$page`` community report findings, then ``$page`` reports, deleted with their links; ``removed``."""
    return delete_communities(finding_label, tenanted), delete_communities(report_label, tenanted)


@dataclass(frozen=True)
class RetractionStatements:
    """A removal's retraction of the community findings (graphrag_orm.communities) its documents supported.

    A finding stores its citations as parallel lists (``chunkIds``, ``documentIds``,
    ``startBytes``, ``endBytes``, ``quotes``); a chunk is gone exactly when its document
    is, so ``$ids`` (the batch's document ids) name the citations that go.
    """

    #: ``$ids``: delete every finding whose every citation is of those documents; per ``report``, ``findings``.
    retract: str
    #: ``$ids``: drop those documents' citations from findings that keep others; per ``report``, ``findings``.
    trim: str
    #: ``$rows`` (``id``, ``retracted``, ``trimmed``): count them on each report, recount its findings,
    #: delete a report left with none; ``dropped``.
    settle: str

    @classmethod
    def render(cls, names: StoredNames) -> RetractionStatements:
        finding, report = names.finding.label, names.report.label
        own = " {tenant: $tenant}" if names.tenanted else ""
        lists = ("chunkIds", "documentIds", "startBytes", "endBytes", "quotes")
        kept = ", ".join(f"f.{name} = [i IN keep | f.{name}[i]]" for name in lists)
        return cls(
            retract=(
                f"MATCH (f:{finding}{own}) WHERE size(f.documentIds) > 0 AND all(d IN f.documentIds WHERE d IN $ids) "
                "WITH f, f.reportId AS report CALL (f) { DETACH DELETE f } "
                "RETURN report, count(*) AS findings"
            ),
            trim=(
                f"MATCH (f:{finding}{own}) WHERE any(d IN f.documentIds WHERE d IN $ids) "
                "AND any(d IN f.documentIds WHERE NOT d IN $ids) "
                "WITH f, [i IN range(0, size(f.documentIds) - 1) WHERE NOT f.documentIds[i] IN $ids] AS keep "
                f"SET {kept} RETURN f.reportId AS report, count(*) AS findings"
            ),
            settle=(
                f"UNWIND $rows AS row MATCH (r:{report} {{id: row.id{names.owned}}}) "
                f"WITH r, row, COUNT {{ (r)-[:{HAS_FINDING}]->(:{finding}) }} AS left "
                "SET r.findings = left, r.retracted = coalesce(r.retracted, 0) + row.retracted, "
                "r.trimmed = coalesce(r.trimmed, 0) + row.trimmed "
                "WITH r, left WHERE left = 0 CALL (r) { DETACH DELETE r } RETURN count(*) AS dropped"
            ),
        )


#: Nodes a batch deletes, after every link: in this order.
NODE_KINDS = ("chunks", "sections", "documents", "leases")
#: Kinds of node a structural link starts from.
SOURCE_KINDS = ("chunks", "sections", "documents")


@dataclass(frozen=True)
class RemovalStatements:
    """:meth:`render` builds them; :meth:`round` combines delete parts into one statement."""

    #: ``$ids``: ``item`` (a kind, a link kind, ``crossing`` or ``degree``), ``run``, ``elements``, ``known``.
    survey: str
    #: ``$ids``, ``$allowed``: ``type``, ``links`` of relationship types not allowed on the batch's nodes.
    unowned_types: str
    #: ``$ids``: ``id`` of every chunk of the documents.
    chunk_ids: str
    #: Link kinds of the layout, in deletion order.
    link_kinds: tuple[str, ...]
    #: Per kind (node or link kind): a delete of at most ``$page`` elements, and the count it returns.
    parts: dict[str, tuple[str, str]]
    #: ``$page``: ``key``, ``run`` of a page of expired leases, by key.
    expired_page: str
    #: ``kind``, ``run``, ``elements`` of every expired lease.
    expired_stamps: str
    #: ``$runs``: ``run`` for each still carried by a document, section, chunk or lease.
    runs_in_use: str
    #: ``$running``: ``run`` of every run not Running, by id.
    finished_runs: str
    #: ``$runs``, ``$running``, ``$page``: delete those run nodes that are free; ``runs``.
    delete_runs: str

    @classmethod
    def render(cls, names: StoredNames, knowledge_types: Sequence[str] = ()) -> RemovalStatements:
        """``knowledge_types``: relationship types the knowledge extension removes itself."""
        lease, run, run_node = names.lease, names.run_id, names.run
        chunks_label, chunks_of = _by_document(names)["chunks"]
        nodes = _batch_nodes(names)
        t = names.tenant_and
        return cls(
            survey=nodes + _survey_tail(names, knowledge_types),
            # Only when the survey finds an excess: name the foreign types and count links from elsewhere.
            unowned_types=(
                nodes + "MATCH (x)-[r]-() WHERE NOT type(r) IN $allowed "
                "RETURN type(r) AS type, count(DISTINCT r) AS links ORDER BY type"
            ),
            chunk_ids=f"MATCH (x:{chunks_label}) WHERE x.{chunks_of} IN $ids{t('x')} RETURN x.{names.chunk.key} AS id",
            link_kinds=tuple(f"{kind} {link}" for kind in SOURCE_KINDS for link in names.structural_types),
            parts=_delete_parts(names),
            expired_page=(
                f"MATCH (x:{lease.label}) WHERE {_expired(names)}{t('x')} "
                f"RETURN x.{lease.key} AS key, x.{run} AS run ORDER BY key LIMIT $page"
            ),
            expired_stamps=(
                f"MATCH (x:{lease.label}) WHERE {_expired(names)}{t('x')} "
                f"RETURN 'leases' AS kind, x.{run} AS run, count(*) AS elements"
            ),
            # Structural links are written with their nodes and carry the same run id, so nodes suffice.
            runs_in_use=(
                "CALL () { "
                + " UNION ".join(
                    f"MATCH (x:{label}) WHERE x.{run} IN $runs{t('x')} RETURN x.{run} AS run"
                    for label in (names.document.label, names.section.label, names.chunk.label, lease.label)
                )
                + " } RETURN run"
            ),
            finished_runs=(
                f"MATCH (r:{run_node.label}) WHERE r.{run_node.stored('status')} <> $running{t('r')} "
                f"RETURN r.{run_node.key} AS run ORDER BY run"
            ),
            # A run node with relationships is not one the toolkit wrote; it is left alone.
            delete_runs=(
                f"MATCH (r:{run_node.label}) WHERE r.{run_node.key} IN $runs{t('r')} "
                f"AND r.{run_node.stored('status')} <> $running "
                "AND NOT EXISTS { (r)--() } WITH r LIMIT $page DELETE r RETURN count(r) AS runs"
            ),
        )

    def round(self, kinds: Sequence[str]) -> str:
        """One statement deleting a page of each of ``kinds``; column ``k<i>`` counts ``kinds[i]``."""
        calls = " ".join(
            f"CALL () {{ {self.parts[kind][0]} RETURN {self.parts[kind][1]} AS k{i} }}" for i, kind in enumerate(kinds)
        )
        return f"{calls} RETURN {', '.join(f'k{i}' for i in range(len(kinds)))}"


def _by_document(names: StoredNames) -> dict[str, tuple[str, str]]:
    """Each kind of node a batch deletes with its documents: its label and the property naming its document."""
    return {
        "documents": (names.document.label, names.document.key),
        "sections": (names.section.label, names.section.stored("document_id")),
        "chunks": (names.chunk.label, names.chunk.stored("document_id")),
    }


def _expired(names: StoredNames) -> str:
    return f"x.{names.lease.stored('expires_at')} <= datetime()"


def _in_lease(names: StoredNames) -> str:
    """The batch's leases (keyed by document id) that have expired (tenanted: the tenant's)."""
    return f"x.{names.lease.key} IN $ids AND {_expired(names)}{names.tenant_and('x')}"


def _batch_nodes(names: StoredNames) -> str:
    """Every node of the batch as ``x``, with the ``doc`` it belongs to and its ``kind``."""
    found = [
        f"MATCH (x:{label}) WHERE x.{of} IN $ids{names.tenant_and('x')} RETURN x, x.{of} AS doc, '{kind}' AS kind"
        for kind, (label, of) in _by_document(names).items()
    ]
    lease = names.lease
    found.append(f"MATCH (x:{lease.label}) WHERE {_in_lease(names)} RETURN x, x.{lease.key} AS doc, 'leases' AS kind")
    return f"CALL () {{ {' UNION ALL '.join(found)} }} "


def _delete_parts(names: StoredNames) -> dict[str, tuple[str, str]]:
    """Per node kind and link kind: a delete of at most ``$page`` elements and the count it returns."""
    parts: dict[str, tuple[str, str]] = {}
    t = names.tenant_and("x")
    for kind, (label, of) in _by_document(names).items():
        for link_type in names.structural_types:
            parts[f"{kind} {link_type}"] = (
                f"MATCH (x:{label})-[r:{link_type}]->() WHERE x.{of} IN $ids{t} WITH r LIMIT $page DELETE r",
                "count(r)",
            )
        parts[kind] = (f"MATCH (x:{label}) WHERE x.{of} IN $ids{t} WITH x LIMIT $page DELETE x", "count(x)")
    claims = names.lease.stored("claims")
    # Lock, then read: a lease renewed or taken over meanwhile is no longer expired and stays.
    parts["leases"] = (
        f"MATCH (x:{names.lease.label}) WHERE {_in_lease(names)} WITH x LIMIT $page "
        f"SET x.{claims} = coalesce(x.{claims}, 0) + 1 "
        f"WITH x, {_expired(names)} AS gone FOREACH (_ IN CASE WHEN gone THEN [1] ELSE [] END | DELETE x)",
        "sum(CASE WHEN gone THEN 1 ELSE 0 END)",
    )
    return parts


def _survey_tail(names: StoredNames, knowledge_types: Sequence[str]) -> str:
    """After the batch's nodes: run stamps of nodes and their outgoing structural links,
    links that leave their document, and each node's degree without the extension's types.

    Degrees are read, not expanded. Every structural link inside the batch is counted
    twice in the degrees, so any excess is a link from elsewhere or of a foreign type.
    """
    run = names.run_id
    # A link stays inside its document when its target names the same document (a
    # section or chunk by its documentId, a document by its id): properties, not labels,
    # because the survey reads one target per link and labels cost a read each.
    same = (
        f"coalesce(m.{names.chunk.stored('document_id')}, m.{names.section.stored('document_id')}, "
        f"m.{names.document.key}) = doc{names.tenant_and('m')}"
    )
    degree = "COUNT { (x)--() }" + (f" - COUNT {{ (x)-[:{'|'.join(knowledge_types)}]-() }}" if knowledge_types else "")
    return (
        "CALL (x, doc, kind) { "
        f"RETURN kind AS item, x.{run} AS run, 1 AS n "
        f"UNION ALL MATCH (x)-[r:{names.structural}]->(m) "
        f"RETURN CASE WHEN {same} THEN kind + ' ' + type(r) ELSE 'crossing' END AS item, r.{run} AS run, 1 AS n "
        f"UNION ALL RETURN 'degree' AS item, null AS run, {degree} AS n }} "
        "WITH item, run, sum(n) AS elements "
        f"RETURN item, run, elements, "
        f"run IS NOT NULL AND EXISTS {{ MATCH (:{names.run.label} {{{names.run.key}: run{names.owned}}}) }} AS known"
    )
