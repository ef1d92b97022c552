"""The scale benchmark's corpus: deterministic Markdown that streams, one seeded RNG per document.

Document ``i`` comes from ``random.Random(f"{seed}:{i}")`` and a vocabulary shared by
the whole corpus (made once from ``seed``, as in ``benchmarks/common.py``), so any
document, any slice, can be generated alone and in parallel, and a 100,000-document
corpus never sits in memory. ``common.MarkdownWriter`` writes each (as for ``common.generate_corpus``): a title, an
introduction, three to five ``##`` sections of prose (some with a ``###``
subsection), an occasional list or code block, Zipf-weighted words and 40 topic
words per document; about ten chunks a document with ``ChunkerOptions()``.

:func:`write_corpus` writes ``doc-NNNNNN.md`` files into ten folders ``slice-0`` ..
``slice-9`` (10% each) and a manifest; a later call with the same seed, size and
generator version finds the manifest and does nothing (the folder is a cache).
This module is shared with ``workers.py`` of the same folder.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import BASE_URI, Corpus, MarkdownWriter

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.loaders.base import LoadedDocument

#: Bumped whenever the text a seed gives changes, so cached corpora are written again.
GENERATOR_VERSION = 1
SLICES = 10
MANIFEST = "manifest.json"
#: ``--size``: documents per size name (about ten chunks each).
SIZES = {"20k": 2_000, "100k": 10_000, "1m": 100_000}


@dataclass(frozen=True)
class CorpusInfo:
    """What a written corpus holds: documents, chunks and bytes per slice, and how long writing took."""

    seed: int
    documents: int
    generator: int
    slice_documents: tuple[int, ...]
    slice_chunks: tuple[int, ...]
    utf8_bytes: int
    seconds: float

    @property
    def chunks(self) -> int:
        return sum(self.slice_chunks)


def document_name(number: int) -> str:
    return f"doc-{number:06d}.md"


def slice_folder(folder: Path, index: int) -> Path:
    return folder / f"slice-{index}"


def slice_bounds(documents: int, index: int) -> range:
    """The document numbers of slice ``index`` (10% of the corpus each, the last takes the remainder)."""
    return range(index * documents // SLICES, (index + 1) * documents // SLICES)


class DocumentGenerator:
    """Generates document ``i`` of the corpus of ``seed`` on its own (the vocabulary is shared)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.writer = MarkdownWriter(random.Random(seed))

    @property
    def vocabulary(self) -> list[str]:
        return self.writer.vocabulary

    def document(self, number: int) -> str:
        """The Markdown of document ``number``: the same text for the same seed and number."""
        return self.writer.document(random.Random(f"{self.seed}:{number}"))


@lru_cache(maxsize=2)
def generator(seed: int) -> DocumentGenerator:
    """One generator per seed and process (its vocabulary takes a moment to make)."""
    return DocumentGenerator(seed)


def count_chunks(text: str, chunker: Chunker) -> int:
    """Chunks the toolkit's chunker makes of one Markdown document (the ingest benchmark's plan)."""
    utf8 = text.encode("utf-8")
    loaded = LoadedDocument(source_uri=BASE_URI, media_type="text/markdown", utf8=utf8)
    return len(chunker.plan(loaded).chunks)


def _write_range(folder: str, seed: int, numbers: range) -> tuple[int, int]:
    """Write documents ``numbers`` into ``folder``; (chunks, UTF-8 bytes). Runs in a worker process."""
    made = generator(seed)
    chunker = Chunker(ChunkerOptions())
    chunks = written = 0
    for number in numbers:
        utf8 = made.document(number).encode("utf-8")
        (Path(folder) / document_name(number)).write_bytes(utf8)
        chunks += count_chunks(utf8.decode("utf-8"), chunker)
        written += len(utf8)
    return chunks, written


def _pieces(numbers: range, parts: int) -> list[range]:
    step = max(1, -(-len(numbers) // parts))
    return [range(start, min(start + step, numbers.stop)) for start in range(numbers.start, numbers.stop, step)]


def read_manifest(folder: Path) -> CorpusInfo | None:
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        data["slice_documents"] = tuple(data["slice_documents"])
        data["slice_chunks"] = tuple(data["slice_chunks"])
        return CorpusInfo(**data)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_corpus(folder: Path, documents: int, seed: int, processes: int = 2) -> CorpusInfo:
    """``documents`` documents in ``folder/slice-0..9``, chunks counted; skipped when the manifest matches.

    The manifest is written last, so an interrupted write is redone whole next time.
    Prints what it did and how long it took.
    """
    cached = read_manifest(folder)
    if cached and (cached.seed, cached.documents, cached.generator) == (seed, documents, GENERATOR_VERSION):
        print(f"corpus: {documents:,} documents already in {folder} (made in {cached.seconds:.1f} s), reused")
        return cached
    began = time.perf_counter()
    (folder / MANIFEST).unlink(missing_ok=True)
    slice_chunks: list[int] = []
    slice_documents: list[int] = []
    total_bytes = 0
    with ProcessPoolExecutor(max_workers=max(1, processes)) as pool:
        for index in range(SLICES):
            target = slice_folder(folder, index)
            target.mkdir(parents=True, exist_ok=True)
            for old in target.glob("*.md"):
                old.unlink()
            numbers = slice_bounds(documents, index)
            parts = _pieces(numbers, 8)
            results = list(pool.map(_write_range, [str(target)] * len(parts), [seed] * len(parts), parts))
            slice_chunks.append(sum(chunks for chunks, _ in results))
            slice_documents.append(len(numbers))
            total_bytes += sum(written for _, written in results)
    info = CorpusInfo(
        seed=seed,
        documents=documents,
        generator=GENERATOR_VERSION,
        slice_documents=tuple(slice_documents),
        slice_chunks=tuple(slice_chunks),
        utf8_bytes=total_bytes,
        seconds=time.perf_counter() - began,
    )
    (folder / MANIFEST).write_text(json.dumps(asdict(info)), encoding="utf-8")
    print(
        f"corpus: wrote {documents:,} documents ({total_bytes / 1e6:.1f} MB, {info.chunks:,} chunks) "
        f"in {info.seconds:.1f} s with {processes} processes, in {folder}"
    )
    return info


def sample_corpus(seed: int, documents: int, count: int, among: Sequence[int] | None = None) -> Corpus:
    """``count`` documents spread over the corpus (or over the document numbers ``among``), as a
    ``common.Corpus`` (for ``generate_questions``)."""
    made = generator(seed)
    pool = range(documents) if among is None else among
    numbers = sorted(random.Random(f"{seed}:sample").sample(pool, min(count, len(pool))))
    chosen = tuple((document_name(n), made.document(n)) for n in numbers)
    return Corpus(seed=seed, documents=chosen, vocabulary=tuple(made.vocabulary))
