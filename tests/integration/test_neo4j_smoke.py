"""The real server the suite runs on: edition, Cypher 25, vector SEARCH, full-text, APOC."""

from __future__ import annotations

import pytest
from neomodel import adb


async def test_server_is_neo4j_2026_community(graph: None) -> None:
    rows, _ = await adb.cypher_query(
        "CALL dbms.components() YIELD name, versions, edition WHERE name = 'Neo4j Kernel' RETURN versions[0], edition"
    )
    version, edition = rows[0]
    assert edition == "community"
    year, month = (int(part) for part in version.split(".")[:2])
    assert (year, month) >= (2026, 2), version


async def test_default_language_is_cypher_25(graph: None) -> None:
    rows, _ = await adb.cypher_query(
        "SHOW DATABASES YIELD name, defaultLanguage WHERE name = 'neo4j' RETURN defaultLanguage"
    )
    assert rows[0][0] == "CYPHER 25"


async def test_vector_index_answers_the_search_clause(graph: None) -> None:
    await adb.cypher_query("UNWIND range(1, 6) AS i CREATE (:SmokeVector {id: i, v: [toFloat(i), 1.0, 0.5]})")
    await adb.cypher_query(
        "CREATE VECTOR INDEX smoke_vector IF NOT EXISTS FOR (n:SmokeVector) ON (n.v) "
        "OPTIONS {indexConfig: {`vector.dimensions`: 3, `vector.similarity_function`: 'cosine'}}"
    )
    try:
        await adb.cypher_query("CALL db.awaitIndex('smoke_vector', 60)")
        rows, _ = await adb.cypher_query(
            "MATCH (n:SmokeVector) SEARCH n IN (VECTOR INDEX smoke_vector FOR $q LIMIT 2) SCORE AS score "
            "RETURN n.id, score ORDER BY score DESC",
            {"q": [6.0, 1.0, 0.5]},
        )
        assert [row[0] for row in rows] == [6, 5]
        assert rows[0][1] == pytest.approx(1.0)
    finally:
        await adb.cypher_query("DROP INDEX smoke_vector IF EXISTS")


async def test_full_text_index_answers_a_query(graph: None) -> None:
    await adb.cypher_query(
        "CREATE (:SmokeText {t: 'the recall covers the BC-310 brake caliper'}), (:SmokeText {t: 'unrelated'})"
    )
    await adb.cypher_query("CREATE FULLTEXT INDEX smoke_text IF NOT EXISTS FOR (n:SmokeText) ON EACH [n.t]")
    try:
        await adb.cypher_query("CALL db.awaitIndex('smoke_text', 60)")
        rows, _ = await adb.cypher_query(
            "CALL db.index.fulltext.queryNodes('smoke_text', 'caliper') YIELD node, score RETURN node.t"
        )
        assert rows == [["the recall covers the BC-310 brake caliper"]]
    finally:
        await adb.cypher_query("DROP INDEX smoke_text IF EXISTS")


async def test_apoc_core_answers_when_installed(graph: None) -> None:
    rows, _ = await adb.cypher_query("SHOW FUNCTIONS YIELD name WHERE name = 'apoc.version' RETURN count(*)")
    if rows[0][0] == 0:
        pytest.skip(
            "APOC core is not installed: Maven Central serves no apoc-core build for Neo4j 2026.x "
            "(only 5.26.x, which this server refuses); the toolkit itself never calls APOC"
        )
    rows, _ = await adb.cypher_query("RETURN apoc.version()")
    assert str(rows[0][0]).startswith("2026.")
