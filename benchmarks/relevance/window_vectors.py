"""An experiment, not a toolkit feature: window vectors searched on their own (issue 26, item 2's
first design), against the pooled chunk vectors the toolkit stores by default.

Each stored chunk is cut into the embedder's windows (``LocalEmbedder.window_spans``, the
same cut pooling uses), each window embedded alone as a passage and written as a
``BenchWindow`` node with its chunk's id; a vector index of their own (``bench_windows``)
is searched by the ``Windows`` route, which ranks each chunk by its best window. Chunks
stay the items; only the vectors change.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphrag_orm.embeddings import LocalEmbedder
from graphrag_orm.retrieval.fusion import Candidate
from graphrag_orm.retrieval.routes import RouteRead, RouteRequest
from graphrag_orm.store import Store

LABEL = "BenchWindow"
INDEX = "bench_windows"
ROUTE = "Windows"
#: Windows written a statement.
BATCH = 64
#: Windows asked of the index for each chunk the route keeps (a chunk's windows crowd each other).
WINDOWS_PER_CANDIDATE = 3


async def build_windows(store: Store, embedder: LocalEmbedder) -> int:
    """Every stored chunk's windows, embedded and indexed; how many were written."""
    rows = await store.read("MATCH (c:Chunk) RETURN c.id AS id, c.text AS text ORDER BY id", name="bench.windows-read")
    windows = [
        (row["id"], start, end, row["text"][start:end])
        for row in rows
        for start, end in embedder.window_spans(row["text"])
    ]
    await store.execute(f"DROP INDEX {INDEX} IF EXISTS", name="bench.windows-drop")
    await store.execute(f"MATCH (w:{LABEL}) DETACH DELETE w", name="bench.windows-clear")
    for first in range(0, len(windows), BATCH):
        batch = windows[first : first + BATCH]
        vectors = await embedder.embed([text for _, _, _, text in batch])
        await store.execute(
            f"UNWIND $rows AS row CREATE (w:{LABEL} {{chunkId: row.id, start: row.start, end: row.end}}) "
            "SET w.embedding = row.vector",
            {
                "rows": [
                    {"id": chunk, "start": start, "end": end, "vector": vector}
                    for (chunk, start, end, _), vector in zip(batch, vectors, strict=True)
                ]
            },
            name="bench.windows-write",
        )
    dimensions = embedder.embedding_set().dimensions
    await store.execute(
        f"CREATE VECTOR INDEX {INDEX} FOR (w:{LABEL}) ON w.embedding OPTIONS {{indexConfig: "
        f"{{`vector.dimensions`: {dimensions}, `vector.similarity_function`: 'cosine'}}}}",
        name="bench.windows-index",
    )
    await store.execute("CALL db.awaitIndexes(300)", name="bench.windows-await")
    return len(windows)


@dataclass
class WindowRoute:
    """Chunks ranked by their best window's similarity to the question."""

    store: Store
    embedder: LocalEmbedder
    name: str = ROUTE
    follows: bool = False
    indexes: tuple[str, ...] = (INDEX,)

    async def plan(self, request: RouteRequest) -> RouteRead:
        k = request.options.route_candidates
        vector = (await self.embedder.embed_query([request.question]))[0]
        rows = await self.store.read(
            f"CALL db.index.vector.queryNodes('{INDEX}', $asked, $vector) YIELD node, score "
            "WITH node.chunkId AS id, max(score) AS score RETURN id, score ORDER BY score DESC, id LIMIT $k",
            {"asked": k * WINDOWS_PER_CANDIDATE, "vector": vector, "k": k},
            name="bench.windows-search",
        )
        return RouteRead(self.name, tuple(Candidate(row["id"], float(row["score"])) for row in rows))
