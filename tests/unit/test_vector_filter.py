"""The vector index's filter properties: rendered, compared, revised; the in-index vector statement."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET, EmbeddingSet
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.layout import Layout
from graphrag_orm.migrate import Chain, initial_revision, next_revision, write_revision
from graphrag_orm.migrate.compare import compare, matches
from graphrag_orm.migrate.revisions import Revision
from graphrag_orm.models import for_layout
from graphrag_orm.retrieval.statements import RetrievalStatements
from graphrag_orm.schema import CreateStep, DropStep, Schema, VectorIndex
from graphrag_orm.store.introspection import LiveDefinition

SET_64 = EmbeddingSet(model="test-model", dimensions=64)
CLI = str(Path(sys.executable).parent / "graphrag-orm")


def _vector(vector_filter: tuple[str, ...] = ()) -> VectorIndex:
    (index,) = [
        d for d in Schema.definitions(Layout.DEFAULT, SET_64, vector_filter=vector_filter) if isinstance(d, VectorIndex)
    ]
    return index


def _live(index: VectorIndex, properties: tuple[str, ...]) -> LiveDefinition:
    detail = {"dimensions": index.dimensions, "similarity": index.similarity.value}
    return LiveDefinition(index.name, ("VECTOR", (index.label,), properties), "ONLINE", detail)


def test_filter_properties_render_in_the_create_statement() -> None:
    plain, filtered = _vector(), _vector(("documentId",))
    assert "WITH [" not in plain.create_cypher()
    assert "ON (n.embedding) WITH [n.documentId] OPTIONS" in filtered.create_cypher()
    two = _vector(("documentId", "order", "documentId"))
    assert two.filter_properties == ("documentId", "order")
    assert "WITH [n.documentId, n.order] OPTIONS" in two.create_cypher()
    assert filtered.signature() == ("VECTOR", ("Chunk",), ("embedding", "documentId"))


def test_an_index_without_filters_dumps_as_before_so_old_checksums_hold() -> None:
    dumped = _vector().model_dump(mode="json")
    assert "filterProperties" not in dumped and "filter_properties" not in dumped
    filtered = _vector(("documentId",))
    assert VectorIndex.model_validate(filtered.model_dump(mode="json")) == filtered
    # The toolkit's own chain still loads: its checksums were computed before the field existed.
    assert Chain.load().revisions


@pytest.mark.parametrize("bad", ["bad name", "c.documentId", "`x`", "1st", ""])
def test_a_bad_filter_property_is_refused_as_invalid_layout(bad: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        Schema.create_steps(Layout.DEFAULT, SET_64, vector_filter=(bad,))
    assert refused.value.code == "invalid-layout"
    with pytest.raises(ValidationError):
        VectorIndex.model_validate({**_vector().model_dump(mode="json"), "filter_properties": [bad]})


def test_the_engine_tells_indexes_with_other_filter_properties_apart() -> None:
    plain, filtered = _vector(), _vector(("documentId",))
    assert matches(plain, _live(plain, ("embedding",)))
    assert not matches(plain, _live(plain, ("embedding", "documentId")))
    assert matches(filtered, _live(filtered, ("embedding", "documentId")))
    assert not matches(filtered, _live(filtered, ("embedding",)))
    check = compare([filtered], {plain.name: _live(plain, ("embedding",))})
    assert [d.name for d in check.different] == [filtered.name]
    assert "documentId" in (check.different[0].expected or "")


def test_a_revision_drops_and_creates_the_vector_index_only(tmp_path: Path) -> None:
    folder = tmp_path / "chain"
    write_revision(folder, initial_revision(Layout.DEFAULT, SET_64, revision="0001_app"))
    made = next_revision(
        Chain.load(folder), Layout.DEFAULT, SET_64, revision="0002_filter", message="m", vector_filter=("documentId",)
    )
    assert made is not None
    assert [(type(s), s.definition.name) for s in made.steps] == [
        (DropStep, _vector().name),
        (CreateStep, _vector().name),
    ]
    assert made.steps[1].definition == _vector(("documentId",))
    write_revision(folder, made)
    path = folder / "0002_filter.json"
    reloaded = Revision.from_file(path, path.read_text())
    assert reloaded.steps == made.steps
    again = next_revision(
        Chain.load(folder), Layout.DEFAULT, SET_64, revision="0003", message="m", vector_filter=("documentId",)
    )
    assert again is None
    back = next_revision(Chain.load(folder), Layout.DEFAULT, SET_64, revision="0003", message="m")
    assert back is not None and back.steps[1].definition == _vector()


def test_the_in_index_statement_filters_by_document_inside_the_search() -> None:
    statements = RetrievalStatements.of(for_layout(Layout.DEFAULT), "vec", "ft", "cosine")
    text = statements.vector_in_index
    assert "SEARCH c IN (VECTOR INDEX vec FOR $vector WHERE c.documentId IN $whole LIMIT $k)" in text
    assert "$ranges" not in text and "embedding" not in text
    graphrag = RetrievalStatements.of(for_layout(Layout.NEO4J_GRAPHRAG), "vec", "ft", "cosine")
    document_id = graphrag.names.chunk.stored("document_id")
    assert f"WHERE c.{document_id} IN $whole" in graphrag.vector_in_index


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "COLUMNS": "160"}
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GRAPHRAG_EMBEDDING_MODEL", "GRAPHRAG_EMBEDDING_DIMENSIONS"):
        environment.pop(name, None)
    environment["GRAPHRAG_EMBEDDING_MODEL"] = "hashing"  # the stand-in, named: the suite's schema is its set
    return subprocess.run([CLI, *args], env=environment, capture_output=True, text=True, timeout=120)


def test_the_cli_writes_the_vector_filter_revision_and_refuses_a_bad_name(tmp_path: Path) -> None:
    chain = tmp_path / "chain"
    assert _cli("migrations", "init", str(chain)).returncode == 0
    made = _cli("migrations", "revision", str(chain), "--id", "0002_f", "-m", "f", "--vector-filter", "documentId")
    assert made.returncode == 0, made.stderr
    assert "2 steps" in made.stdout
    body = json.loads((chain / "0002_f.json").read_text())
    assert [s["action"] for s in body["steps"]] == ["drop", "create"]
    assert body["steps"][1]["definition"]["filter_properties"] == ["documentId"]
    assert body["steps"][1]["definition"]["dimensions"] == OFFLINE_EMBEDDING_SET.dimensions
    bad = _cli("migrations", "revision", str(chain), "--id", "0003_b", "-m", "b", "--vector-filter", "bad name")
    assert bad.returncode == 1
    assert "(invalid-layout)" in bad.stderr and "Traceback" not in bad.stderr + bad.stdout
    assert not (chain / "0003_b.json").exists()
