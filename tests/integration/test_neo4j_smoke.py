"""The real server the suite runs on: edition, Cypher 25, vector SEARCH, full-text, APOC."""

from __future__ import annotations

import pytest

from graphrag_orm.store import Store


async def test_server_is_neo4j_2026_community(graph: None, store: Store) -> None:
    row = (
        await store.read(
            "CALL dbms.components() YIELD name, versions, edition WHERE name = 'Neo4j Kernel' "
            "RETURN versions[0] AS version, edition"
        )
    ).records[0]
    version, edition = row["version"], row["edition"]
    assert edition == "community"
    year, month = (int(part) for part in version.split(".")[:2])
    assert (year, month) >= (2026, 2), version


async def test_default_language_is_cypher_25(graph: None, store: Store) -> None:
    result = await store.read(
        "SHOW DATABASES YIELD name, defaultLanguage WHERE name = 'neo4j' RETURN defaultLanguage AS language"
    )
    assert result.value("language") == "CYPHER 25"


async def test_vector_index_answers_the_search_clause(graph: None, store: Store) -> None:
    await store.execute("UNWIND range(1, 6) AS i CREATE (:SmokeVector {id: i, v: [toFloat(i), 1.0, 0.5]})")
    await store.execute(
        "CREATE VECTOR INDEX smoke_vector IF NOT EXISTS FOR (n:SmokeVector) ON (n.v) "
        "OPTIONS {indexConfig: {`vector.dimensions`: 3, `vector.similarity_function`: 'cosine'}}"
    )
    try:
        await store.execute("CALL db.awaitIndex('smoke_vector', 60)")
        result = await store.read(
            "MATCH (n:SmokeVector) SEARCH n IN (VECTOR INDEX smoke_vector FOR $q LIMIT 2) SCORE AS score "
            "RETURN n.id AS id, score ORDER BY score DESC",
            {"q": [6.0, 1.0, 0.5]},
        )
        assert result.column("id") == [6, 5]
        assert result.records[0]["score"] == pytest.approx(1.0)
    finally:
        await store.execute("DROP INDEX smoke_vector IF EXISTS")


async def test_full_text_index_answers_a_query(graph: None, store: Store) -> None:
    await store.execute(
        "CREATE (:SmokeText {t: 'the recall covers the BC-310 brake caliper'}), (:SmokeText {t: 'unrelated'})"
    )
    await store.execute("CREATE FULLTEXT INDEX smoke_text IF NOT EXISTS FOR (n:SmokeText) ON EACH [n.t]")
    try:
        await store.execute("CALL db.awaitIndex('smoke_text', 60)")
        result = await store.read(
            "CALL db.index.fulltext.queryNodes('smoke_text', 'caliper') YIELD node, score RETURN node.t AS text"
        )
        assert result.column("text") == ["the recall covers the BC-310 brake caliper"]
    finally:
        await store.execute("DROP INDEX smoke_text IF EXISTS")


async def test_apoc_core_answers_when_installed(graph: None, store: Store) -> None:
    result = await store.read("SHOW FUNCTIONS YIELD name WHERE name = 'apoc.version' RETURN count(*) AS found")
    if result.value("found", 0) == 0:
        pytest.skip(
            "APOC core is not installed: Maven Central serves no apoc-core build for Neo4j 2026.x "
            "(only 5.26.x, which this server refuses); the toolkit itself never calls APOC"
        )
    result = await store.read("RETURN apoc.version() AS version")
    assert str(result.value("version")).startswith("2026.")
