"""Shared by the LangChain and LlamaIndex adapter tests: the Markdown they split, the facade, the checks.

The Markdown is test data written for these tests: accents, CJK, emoji, Greek, a fenced
code block with indentation, nested headings, a list and runs of blank lines, so a
splitter that strips or joins lines, or counts characters where the toolkit counts bytes,
shows up in the placement counts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

from graphrag_orm import GraphRag
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import DocumentStatus, IngestionReceipt
from graphrag_orm.sources import Source, Sources
from graphrag_orm.store import Store

__all__ = [
    "CAFE_GUIDE",
    "CORPUS",
    "TRAIN_NOTES",
    "assert_chunks_are_the_document_bytes",
    "facade",
    "markdown_sources",
    "placement_table",
    "stored_chunks",
]

CAFE_GUIDE = """# Café guide: Zürich ☕

Émile opens the café at seven. Crème brûlée, naïve façades and a smörgåsbord of pastries
greet the first guests; the señora at the till speaks four languages.

## 東京 branch

東京の支店は駅の近くにあります。毎朝八時に開店します。

抹茶ラテ 🍵 is the best seller; the queue reaches the corner by nine.

### Opening hours

- Monday to Friday: 08:00–20:00
- Saturday: 09:00–18:00 🎉
- Sunday: closed

## Recipes

The espresso machine runs this script:

```python
def brew(grams: float) -> str:
    \"\"\"Pull one shot.\"\"\"
    if grams > 18.5:
        return "ristretto"
    return "lungo"
```

After brewing, rinse the portafilter.


Two blank lines above. Straße, Ærø and Øresund are on the delivery list.

### Ελληνικά

Ο καφές σερβίρεται ζεστός. Καλή όρεξη!
"""

TRAIN_NOTES = """# Night train notes

The night train leaves Wien at 21:40 and reaches Kraków at dawn. Sleeper berths hold
six people; the conductor brings coffee ☕ at six.

## Tickets

Tickets cost 59 € in a couchette and 129 € in a private cabin. Children under six ride free.

## 北京 connection

北京行きの列車は週に二回運行しています。 The journey takes six days 🚂.
"""

CORPUS: Mapping[str, str] = {"adapters/cafe-guide": CAFE_GUIDE, "adapters/train-notes": TRAIN_NOTES}


def markdown_sources() -> list[Source]:
    return [Sources.text(name, text, media_type="text/markdown") for name, text in CORPUS.items()]


def facade() -> GraphRag:
    """A facade with the offline hashing embedder (the suite's schema is for its set)."""
    return GraphRag(embedding_set=OFFLINE_EMBEDDING_SET, embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions))


async def stored_chunks(store: Store, document_id: str) -> list[dict[str, object]]:
    """The document's stored chunks in order: text and span; and its stored hash and length."""
    result = await store.read(
        "MATCH (d:Document {id: $id}) OPTIONAL MATCH (c:Chunk {documentId: $id}) "
        "WITH d, c ORDER BY c.startByte, c.endByte "
        "RETURN d.contentHash AS hash, d.lengthBytes AS length, "
        "collect(c {.text, .startByte, .endByte}) AS chunks",
        {"id": document_id},
    )
    row = result.single()
    assert row is not None, "the document is stored"
    return [{"hash": row["hash"], "length": row["length"], **chunk} for chunk in row["chunks"]]


async def assert_chunks_are_the_document_bytes(store: Store, source: Source) -> int:
    """Every stored chunk of ``source`` is exactly the stored document's bytes at its span; returns the count."""
    assert source.text is not None
    utf8 = source.text.encode("utf-8")
    chunks = await stored_chunks(store, source.document_id)
    assert chunks, "the document has chunks"
    for chunk in chunks:
        assert chunk["hash"] == hashlib.sha256(utf8).hexdigest(), "the stored document is these bytes"
        assert chunk["length"] == len(utf8)
        start, end = chunk["startByte"], chunk["endByte"]
        assert isinstance(start, int) and isinstance(end, int)
        assert chunk["text"] == utf8[start:end].decode("utf-8")
    return len(chunks)


def placement_table(rows: Iterable[tuple[str, Mapping[str, int]]]) -> str:
    """A Markdown table of placement counts per splitter, as docs/interop.md shows it."""
    columns = ("chunks", "exact", "prefix-removed", "normalised", "given", "skipped", "not placed")
    lines = [
        "| splitter | " + " | ".join(columns) + " |",
        "|---|" + "---:|" * len(columns),
    ]
    for name, counts in rows:
        lines.append(f"| {name} | " + " | ".join(str(counts.get(column, 0)) for column in columns) + " |")
    return "\n".join(lines)


def counts_of(receipt: IngestionReceipt) -> dict[str, int]:
    """How the receipt's chunks were placed (and how many documents could not be), the zero counts left out."""
    placement = receipt.placement
    assert placement is not None
    counts = {
        "given": placement.given,
        "exact": placement.exact,
        "prefix-removed": placement.prefix_removed,
        "normalised": placement.normalised,
        "skipped": placement.skipped,
        "not placed": receipt.count(DocumentStatus.FAILED),
        "chunks": placement.placed + placement.skipped,
    }
    return {name: value for name, value in counts.items() if value}
