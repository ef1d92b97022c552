"""Chunking throughput: graphrag-orm's chunker against a naive baseline, in one run.

Generates a deterministic Markdown corpus (seeded; 50 MB by default) in memory, then
plans every document with :class:`graphrag_orm.chunking.Chunker` and with a naive
line-by-line chunker doing the same work (ATX headings outside fences, blank-line
paragraphs, greedy packing to a byte budget with byte offsets, cutting long
paragraphs at code points). Prints MB/s for each, the ratio, and checks that both
cover every byte of every document.

    .venv/bin/python benchmarks/chunking/run.py            # 50 MB, best of 5 rounds
    .venv/bin/python benchmarks/chunking/run.py --mb 5     # a quick look

MB here is 10**6 bytes of UTF-8 input. Each round runs both chunkers over the whole
corpus, one after the other; the best round of each is reported.
"""

from __future__ import annotations

import argparse
import gc
import platform
import random
import re
import sys
import time
from collections.abc import Callable, Sequence

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.loaders.base import LoadedDocument
from graphrag_orm.tokens import ByteEstimateCounter

WORDS = [
    "graph",
    "retrieval",
    "chunk",
    "section",
    "paragraph",
    "evidence",
    "citation",
    "document",
    "neo4j",
    "vector",
    "index",
    "lease",
    "ingestion",
    "embedding",
    "fingerprint",
    "budget",
    "overlap",
    "heading",
    "fence",
    "token",
    "offset",
    "byte",
    "the",
    "a",
    "of",
    "and",
    "to",
    "in",
    "is",
    "for",
    "on",
    "with",
    "as",
    "by",
    "at",
    "from",
    "that",
    "this",
    "it",
    "be",
    "are",
    "was",
    "were",
]
UNICODE_WORDS = ["café", "naïve", "Zürich", "東京", "данные", "Ελλάδα", "😀", "🚲", "ﬁle", "Ω≈ç√"]


def _sentences(rng: random.Random, count: int) -> list[str]:
    pool = []
    for _ in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.randint(6, 22))]
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words)), rng.choice(UNICODE_WORDS))
        sentence = " ".join(words)
        pool.append(sentence[0].upper() + sentence[1:] + rng.choice(".!?"))
    return pool


_WRAP = re.compile(r"(.{1,78})(?: |$)")


def _wrap(text: str) -> str:
    """Hard-wrap at 79 columns, as many Markdown files are."""
    return "\n".join(match.group(1) for match in _WRAP.finditer(text) if match.group(1))


def _document(rng: random.Random, pool: Sequence[str], target: int) -> str:
    """One Markdown document of about ``target`` characters; half of them hard-wrapped."""
    wrapped = rng.random() < 0.5
    parts: list[str] = [f"# {rng.choice(pool)[:40]}\n\n"]
    size = 0
    while size < target:
        roll = rng.random()
        if roll < 0.08:
            part = f"{'#' * rng.randint(2, 4)} {rng.choice(pool)[:50]}\n\n"
        elif roll < 0.14:
            fence = rng.choice(["```", "~~~", "````"])
            body = "\n".join(f"# comment {i}\nvalue_{i} = {i}" for i in range(rng.randint(2, 12)))
            part = f"{fence}python\n{body}\n\n{fence}\n\n"
        elif roll < 0.22:
            part = "".join(f"- {rng.choice(pool)}\n" for _ in range(rng.randint(2, 8))) + "\n"
        elif roll < 0.25:
            # A long line: a paragraph over the budget that has to be cut.
            part = " ".join(rng.choice(pool) for _ in range(rng.randint(30, 80))) + "\n\n"
        elif roll < 0.28:
            part = "| a | b |\n|---|---|\n" + "".join(f"| {i} | {rng.choice(WORDS)} |\n" for i in range(6)) + "\n"
        elif wrapped:
            part = _wrap(" ".join(rng.choice(pool) for _ in range(rng.randint(1, 7)))) + "\n\n"
        else:
            part = "\n".join(rng.choice(pool) for _ in range(rng.randint(1, 7))) + "\n\n"
        parts.append(part)
        size += len(part)
    text = "".join(parts)
    return text.replace("\n", "\r\n") if rng.random() < 0.1 else text


def corpus(total_bytes: int, seed: int = 52) -> list[bytes]:
    """Deterministic Markdown documents totalling at least ``total_bytes`` UTF-8 bytes."""
    rng = random.Random(seed)
    pool = _sentences(rng, 4_000)
    documents: list[bytes] = []
    size = 0
    while size < total_bytes:
        utf8 = _document(rng, pool, rng.randint(2_000, 200_000)).encode("utf-8")
        documents.append(utf8)
        size += len(utf8)
    return documents


# The naive baseline: what a straightforward implementation looks like. It decodes,
# walks line by line, tracks byte offsets by encoding each line, and packs paragraphs.
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|\r?\n|$)")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def naive_chunks(utf8: bytes, budget: int) -> list[tuple[int, int]]:
    text = utf8.decode("utf-8")
    paragraphs: list[tuple[int, int, bool]] = []  # start, end, starts a segment
    offset = 0
    start = 0
    fence: str | None = None
    in_blank_run = False
    heading_next = True
    for line in text.splitlines(keepends=True):
        length = len(line.encode("utf-8"))
        blank = not line.strip(" \t\r\n")
        fence_match = _FENCE.match(line)
        if fence is not None:
            if fence_match and fence_match.group(1)[0] == fence[0] and len(fence_match.group(1)) >= len(fence):
                fence = None
        elif fence_match:
            fence = fence_match.group(1)
        elif _HEADING.match(line):
            if offset > start:
                paragraphs.append((start, offset, heading_next))
            start, heading_next = offset, True
        elif not blank and in_blank_run and offset > start:
            paragraphs.append((start, offset, heading_next))
            start, heading_next = offset, False
        in_blank_run = blank and fence is None
        offset += length
    if offset > start:
        paragraphs.append((start, offset, heading_next))

    chunks: list[tuple[int, int]] = []
    chunk_start = chunk_end = -1
    for para_start, para_end, new_segment in paragraphs:
        if chunk_start >= 0 and (new_segment or para_end - chunk_start > budget):
            chunks.append((chunk_start, chunk_end))
            chunk_start = -1
        if chunk_start < 0:
            chunk_start = para_start
            while para_end - chunk_start > budget:
                cut = chunk_start + budget
                while utf8[cut] & 0xC0 == 0x80:
                    cut -= 1
                chunks.append((chunk_start, cut))
                chunk_start = cut
        chunk_end = para_end
    if chunk_start >= 0:
        chunks.append((chunk_start, chunk_end))
    return chunks


def _covers(utf8: bytes, spans: Sequence[tuple[int, int]]) -> bool:
    """True when the spans, in order, leave no byte out and are never empty."""
    reach = 0
    for start, end in spans:
        if start > reach or end <= start:
            return False
        reach = max(reach, end)
    return reach == len(utf8)


def _best_times(works: Sequence[Callable[[], int]], repeats: int) -> list[float]:
    """The best wall time of each work over ``repeats`` rounds, the works interleaved
    within each round, so that a busy machine slows both sides alike."""
    best = [float("inf")] * len(works)
    for _ in range(repeats):
        for position, work in enumerate(works):
            gc.collect()
            began = time.perf_counter()
            work()
            best[position] = min(best[position], time.perf_counter() - began)
    return best


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=50.0, help="corpus size in MB (10**6 bytes)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--budget", type=int, default=2_048, help="max_utf8_bytes for both")
    parser.add_argument("--overlap", type=int, default=1, help="overlap_paragraphs for graphrag-orm")
    parser.add_argument("--seed", type=int, default=52)
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help="also enforce this token budget with ByteEstimateCounter (the naive baseline has none)",
    )
    arguments = parser.parse_args(argv)

    began = time.perf_counter()
    documents = corpus(int(arguments.mb * 1e6), arguments.seed)
    total = sum(len(document) for document in documents)
    loaded = [
        LoadedDocument(source_uri=f"text:bench-{index}", media_type="text/markdown", utf8=utf8)
        for index, utf8 in enumerate(documents)
    ]
    print(
        f"corpus: {len(documents)} Markdown documents, {total / 1e6:.1f} MB, seed {arguments.seed}, "
        f"generated in {time.perf_counter() - began:.1f} s"
    )
    print(
        f"python {platform.python_version()} on {platform.machine()}, budget {arguments.budget} bytes, "
        f"overlap {arguments.overlap}, max_tokens {arguments.max_tokens}"
    )

    chunker = Chunker(
        ChunkerOptions(
            max_utf8_bytes=arguments.budget, overlap_paragraphs=arguments.overlap, max_tokens=arguments.max_tokens
        ),
        token_counter=ByteEstimateCounter() if arguments.max_tokens else None,
    )
    counts = {"ours": 0, "naive": 0}

    def ours() -> int:
        counts["ours"] = sum(len(chunker.plan(document).chunks) for document in loaded)
        return counts["ours"]

    def naive() -> int:
        counts["naive"] = sum(len(naive_chunks(utf8, arguments.budget)) for utf8 in documents)
        return counts["naive"]

    best_ours, best_naive = _best_times([ours, naive], arguments.repeats)
    rate_ours, rate_naive = total / best_ours / 1e6, total / best_naive / 1e6
    print(f"{'graphrag-orm Chunker':<28} {best_ours:8.3f} s   {rate_ours:8.1f} MB/s")
    print(f"{'naive line-by-line baseline':<28} {best_naive:8.3f} s   {rate_naive:8.1f} MB/s")
    print(f"ratio (ours / naive): {rate_ours / rate_naive:.2f}x")
    print(f"chunks: ours {counts['ours']:,}, naive {counts['naive']:,}")

    for document in loaded:
        plan = chunker.plan(document)
        spans = [(chunk.start_byte, chunk.end_byte) for chunk in plan.chunks]
        baseline = naive_chunks(document.utf8, arguments.budget)
        if not _covers(document.utf8, spans) or not _covers(document.utf8, baseline):
            print("coverage check FAILED", file=sys.stderr)
            return 1
    print("coverage check: every byte of every document is in a chunk (both chunkers)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
