"""What a tenanted layout changes in the statements and the schema, and what an untenanted one
does not (issue 31, item 1; docs/tenancy.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from graphrag_orm.catalog.statements import CatalogStatements
from graphrag_orm.codes import LimitName
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.evaluation.stored import StoredChunks
from graphrag_orm.evidence import Route
from graphrag_orm.ingestion.statements import DocumentStatements, LeaseStatements, RunStatements, Statement
from graphrag_orm.layout import Layout
from graphrag_orm.migrate import Chain, next_revision
from graphrag_orm.models import for_layout
from graphrag_orm.retrieval.fusion import fuse_clause
from graphrag_orm.retrieval.routes import RouteSearch
from graphrag_orm.retrieval.statements import RetrievalStatements
from graphrag_orm.schema import CompositeUniqueConstraint, FullTextIndex, RangeIndex, Schema, VectorIndex
from graphrag_orm.sources import Sources, document_id
from graphrag_orm.store import Store
from graphrag_orm.store.fence import fence_for, foreign_keys

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"
TENANTED = Layout.DEFAULT.replace(tenancy="required")


def statements(layout: Layout) -> dict[str, str]:
    """Every statement the ingestion, retrieval and catalog render for ``layout``, by name."""
    names = for_layout(layout).names
    found: dict[str, str] = {}
    for group in (DocumentStatements.render(names), LeaseStatements.render(names), RunStatements.render(names)):
        for field, value in vars(group).items():
            found[f"{type(group).__name__}.{field}"] = value.cypher if isinstance(value, Statement) else value
    for field, value in vars(CatalogStatements.render(names)).items():
        found[f"CatalogStatements.{field}"] = value
    retrieval = RetrievalStatements(names, "vectors", "texts", "cosine")
    for field in (
        "scope_chunks",
        "vector",
        "vector_over_fetch",
        "vector_in_index",
        "vector_exact",
        "full_text",
        "full_text_over_fetch",
        "existing_documents",
        "named",
        "sections",
        "scope_size",
    ):
        found[f"RetrievalStatements.{field}"] = getattr(retrieval, field)
    found["RetrievalStatements.metadata"] = retrieval.metadata(())
    found["RetrievalStatements.metadata.publisher"] = retrieval.metadata(("publisher",))
    found["RetrievalStatements.fuse"] = retrieval.fuse(2)
    found["fuse_clause"] = fuse_clause(names)
    stored = StoredChunks(Store(), for_layout(layout))
    found["StoredChunks.statement"], found["StoredChunks.uris_statement"] = stored.statement, stored.uris_statement
    return found


@pytest.mark.parametrize("layout", [Layout.DEFAULT, Layout.NEO4J_GRAPHRAG], ids=["default", "neo4j-graphrag"])
def test_an_untenanted_layouts_statements_never_name_a_tenant(layout: Layout) -> None:
    rendered = statements(layout)
    assert len(rendered) > 40
    assert [name for name, cypher in rendered.items() if "tenant" in cypher.lower()] == []


def test_every_statement_of_a_tenanted_layout_is_the_tenants() -> None:
    # The store binds $tenant; a statement that never uses it would read or write every tenant.
    assert [name for name, cypher in statements(TENANTED).items() if "$tenant" not in cypher] == []


def test_a_tenanted_layouts_writes_stamp_and_match_the_tenant() -> None:
    rendered = statements(TENANTED)
    write = rendered["DocumentStatements.write_new"]
    assert write.count("n.tenant = $tenant") == 2  # sections and chunks
    assert "MERGE (n:Document {id: row.id, tenant: $tenant})" in write
    assert "l.tenant = $tenant" in rendered["LeaseStatements.insert"]
    assert rendered["RunStatements.start"].endswith("SET n = row, n.tenant = $tenant")
    # Both indexes filter inside themselves; the full-text route checks each hit exactly after it.
    assert "FOR $vector WHERE c.tenant = $tenant LIMIT $vectorFetch" in rendered["RetrievalStatements.vector"]
    assert "WHERE c.tenant = $tenant" in rendered["RetrievalStatements.full_text"]
    assert "LIMIT $k" in rendered["RetrievalStatements.full_text"]
    # A shared vote follows NEXT_CHUNK from the tenant's chunk to the tenant's chunk only.
    assert "(h:Chunk {id: hit.id, tenant: $tenant})" in rendered["fuse_clause"]
    assert "AND o.tenant = $tenant" in rendered["fuse_clause"]


def test_the_untenanted_schema_is_the_toolkits_chain_unchanged() -> None:
    declared = {d.name: d for d in Schema.definitions(Layout.DEFAULT, OFFLINE_EMBEDDING_SET)}
    chain = Chain.load(MIGRATIONS)
    assert chain.head == "0003_community_reports"
    assert chain.definitions_at() == declared
    assert not any("tenant" in d.model_dump_json() for d in declared.values())


def test_the_reviewed_tenancy_revision_is_what_a_tenanted_layout_declares() -> None:
    chain = Chain.load(MIGRATIONS, tenanted=True)
    assert [r.revision for r in chain.revisions][-3:] == [
        "0003_community_reports",
        "0004_tenancy",
        "0005_tenant_full_text",
    ]
    assert next_revision(chain, TENANTED, OFFLINE_EMBEDDING_SET, revision="x", message="m") is None
    head = chain.definitions_at()
    vector = next(d for d in head.values() if isinstance(d, VectorIndex))
    assert vector.filter_properties == ("tenant",)
    assert "WITH [n.tenant]" in vector.create_cypher()
    unique = next(d for d in head.values() if isinstance(d, CompositeUniqueConstraint))
    assert unique.create_cypher().endswith("FOR (n:Document) REQUIRE (n.tenant, n.sourceUri) IS UNIQUE")
    indexed = sorted(d.label for d in head.values() if isinstance(d, RangeIndex) and d.properties == ("tenant",))
    assert indexed == ["Chunk", "Document", "GraphRagLease", "IngestionRun", "Section"]
    text = next(d for d in head.values() if isinstance(d, FullTextIndex))
    assert text.properties == ("text", "tenant")
    assert "ON EACH [n.text, n.tenant]" in text.create_cypher()


def test_a_tenants_document_id_is_qualified_by_the_tenant() -> None:
    source = Sources.text("handbook", "Members can borrow twelve items.")
    assert source.document_id == document_id("text:handbook")  # untenanted: as it always was
    acme, globex = source.in_tenant("acme"), source.in_tenant("globex")
    assert len({source.document_id, acme.document_id, globex.document_id}) == 3
    assert acme.document_id == document_id("text:handbook", "acme")
    assert acme.source_uri == globex.source_uri == source.source_uri


def test_a_tenanted_full_text_search_reports_short_only_when_the_index_filled_its_fetch() -> None:
    search = RouteSearch(
        Route.FULL_TEXT,
        "fullText",
        "CALL () { RETURN [] AS fullText, 0 AS fullTextFound } ",
        asked=5,
        k=5,
        short_limit=LimitName.FULL_TEXT_TENANT_OVER_FETCH,
        counts_found=True,
    )
    # The index returned 5 (its fetch), 2 were another tenant's whose id shares this one's words.
    assert [limit.name for limit in search.counted(3, 5).limits] == [LimitName.FULL_TEXT_TENANT_OVER_FETCH]
    # The tenant has 3 matching chunks: nothing was cut, nothing to report.
    assert search.counted(3, 3).limits == ()
    assert search.counted(5, 5).limits == ()
    untenanted = RouteSearch(Route.FULL_TEXT, "fullText", "CALL () { RETURN [] AS fullText } ", k=5)
    assert untenanted.counted(3).limits == ()


def test_the_tenanted_full_text_statement_filters_inside_the_index_then_exactly() -> None:
    statements = RetrievalStatements.of(for_layout(TENANTED), "vi", "ft", "cosine")
    text = statements.full_text
    assert "'text:(' + $query + ') AND tenant:\"' + $tenant + '\"^0'" in text
    assert "WHERE c.tenant = $tenant" in text and "size(found) AS fullTextFound" in text
    evidence = statements.evidence([_Part(Route.FULL_TEXT, "fullText", text, True)], 0)
    assert "fullTextFound: fullTextFound" in evidence
    untenanted = RetrievalStatements.of(for_layout(Layout.DEFAULT), "vi", "ft", "cosine").full_text
    assert "$tenant" not in untenanted and "Found" not in untenanted
    assert "queryNodes($fullTextIndex, $query," in untenanted


@dataclass(frozen=True)
class _Part:
    route: str
    column: str
    subquery: str | None
    counts_found: bool = False


@pytest.mark.parametrize("tenancy", [None, "required"])
def test_the_cli_chain_of_a_tenanted_graph_has_the_tenancy_revision_and_a_derived_index_filtered_by_tenant(
    monkeypatch: pytest.MonkeyPatch, tenancy: str | None
) -> None:
    from graphrag_orm.cli.migrations import _chain_and_derived_set
    from graphrag_orm.tenancy import TENANCY_ENV

    monkeypatch.delenv("GRAPHRAG_MIGRATIONS_DIR", raising=False)
    monkeypatch.setenv("GRAPHRAG_EMBEDDING_MODEL", "all-MiniLM-L6-v2-int8")  # a set other than the chain's own
    monkeypatch.delenv("GRAPHRAG_EMBEDDING_DIMENSIONS", raising=False)
    if tenancy is None:
        monkeypatch.delenv(TENANCY_ENV, raising=False)
    else:
        monkeypatch.setenv(TENANCY_ENV, tenancy)
    chain, derived = _chain_and_derived_set(None)
    ids = [revision.revision for revision in chain.revisions]
    assert derived is not None and derived.model == "all-MiniLM-L6-v2-int8"
    assert ("0004_tenancy" in ids) == (tenancy == "required")
    created = [
        step.definition
        for step in chain.revisions[-1].steps
        if step.action == "create" and step.definition.kind == "vector-index"
    ]
    assert len(created) == 1 and created[0].dimensions == 384
    assert ("tenant" in (created[0].filter_properties or ())) == (tenancy == "required")


def test_the_fence_of_vouched_cypher_is_a_tenanted_layouts_only() -> None:
    tenanted, untenanted = for_layout(TENANTED).names, for_layout(Layout.DEFAULT).names
    foreign = foreign_keys(tenanted)
    # Another tenant's key, or a key of a node that carries no tenant, in each lexical label.
    assert foreign.count("WHERE n.tenant IS NULL OR n.tenant <> $tenant") == 5
    for label in ("Document", "Section", "Chunk", "IngestionRun"):
        assert f"MATCH (n:{label} " in foreign
    fence = fence_for(tenanted, "acme")
    assert fence is not None and fence.tenant.value == "acme" and fence.foreign_keys == foreign
    assert fence_for(tenanted, None) is None and fence_for(untenanted, "acme") is None
    with pytest.raises(TypeError):
        foreign_keys(untenanted)
