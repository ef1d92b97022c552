"""The local model cards' embedding throughput on the dev set's chunks, interleaved so they share the machine's load.

    .venv/bin/python benchmarks/relevance/throughput.py                     # every ONNX card on this machine
    .venv/bin/python benchmarks/relevance/throughput.py --every 4 --rounds 5

The chunks are those ``run.py`` ingests (*Pride and Prejudice*, the default chunker: 463
chunks of at most 2 KiB), every ``--every``-th of them, embedded as passages. Each round
embeds them once with each card in turn (after one warm-up call per card), so load from
other work falls on every card alike; a card's figure is its best round. Reported: word
pieces read a chunk (each card reads up to its window), texts per second of wall time and
per CPU-second of this process (all its threads), and the same for e5 and bge held to
MiniLM's 256-piece window (``@256``: what the larger window costs). No database.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphrag_orm.chunking import Chunker
from graphrag_orm.embeddings import LocalEmbedder
from graphrag_orm.embeddings.local import LOCAL_MODELS, LocalModel
from graphrag_orm.loaders import LoadedDocument

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "examples" / "devset" / "pride-and-prejudice.txt"


def chunks(every: int) -> list[str]:
    utf8 = CORPUS.read_bytes()
    document = LoadedDocument(source_uri="pride-and-prejudice", media_type="text/plain", utf8=utf8)
    return Chunker().plan(document).texts(utf8)[::every]


def cards(names: list[str] | None) -> list[tuple[str, LocalModel]]:
    """The ONNX cards on this machine, then those with a window over 256 held to 256 pieces."""
    chosen = [LOCAL_MODELS[name] for name in names] if names else list(LOCAL_MODELS.values())
    ready = [card for card in chosen if card.runtime == "onnx" and LocalEmbedder.available(card.name)]
    held = [
        (f"{card.name}@256", dataclasses.replace(card, max_input_tokens=256))
        for card in ready
        if card.max_input_tokens is not None and card.max_input_tokens > 256
    ]
    return [(card.name, card) for card in ready] + held


async def main(args: argparse.Namespace) -> None:
    texts = chunks(args.every)
    embedders = {label: LocalEmbedder(card, threads=args.threads) for label, card in cards(args.model)}
    print(f"{len(texts)} chunks (every {args.every}th), {args.rounds} rounds, load {os.getloadavg()[0]:.2f}")
    for embedder in embedders.values():
        await embedder.embed(texts[:8])
    pieces: dict[str, float] = {}
    rates: dict[str, list[float]] = {label: [] for label in embedders}
    per_cpu: dict[str, list[float]] = {label: [] for label in embedders}
    for round_ in range(args.rounds):
        for label, embedder in embedders.items():
            began, cpu = time.perf_counter(), time.process_time()
            vectors = await embedder.embed(texts)
            wall, spent = time.perf_counter() - began, time.process_time() - cpu
            pieces[label] = (vectors.input_tokens or 0) / len(texts)
            rates[label].append(len(texts) / wall)
            per_cpu[label].append(len(texts) / max(spent, 1e-9))
            print(
                f"round {round_ + 1} {label}: {rates[label][-1]:.1f} texts/s, {per_cpu[label][-1]:.1f} per CPU-second"
            )
    print(f"load after: {os.getloadavg()[0]:.2f}\n")
    print("| card | word pieces read a chunk | texts/s (best round) | texts per CPU-second (best round) |")
    print("|---|---:|---:|---:|")
    for label in embedders:
        print(f"| {label} | {pieces[label]:.0f} | {max(rates[label]):.1f} | {max(per_cpu[label]):.1f} |")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--model", action="append", help="a card's name (repeatable; default: every ONNX card here)")
    parser.add_argument("--every", type=int, default=8, help="embed every n-th chunk (default 8: 58 chunks)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="ONNX Runtime's threads (default: its choice)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
