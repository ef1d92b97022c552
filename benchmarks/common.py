"""Shared by the ingestion and retrieval benchmarks: the corpus, the questions, the server, the load.

- :func:`generate_corpus`: a deterministic Markdown corpus (seeded) whose documents
  chunk to about ten chunks each with the chunker's defaults.
- :func:`generate_questions`: plain-word questions drawn from the corpus's own text.
- :class:`BenchServer`: the benchmark's own local Neo4j (``tools/neo4j/home-bench``,
  port 7697) unless ``NEO4J_URI`` is set; stopped at the end only if it started it.
- :func:`reset_database`: an empty graph with fresh indexes: data deleted, every
  index and constraint dropped, the toolkit's chain applied again (through a store).
- :class:`StatementCounter`: statements counted and timed by name through a store's
  hook, while installed.
- :class:`LoadProbe`: how busy the whole machine was while a contender ran, and how
  much of that was this benchmark (its process, its children and the Neo4j server).

Run from the repository root with the project's venv; ``benchmarks/`` is put on
``sys.path`` by each ``run.py``.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import random
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphrag_orm.chunking import ChunkPlan, chunk_id
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.localdb import LocalDbSettings, start, stop
from graphrag_orm.migrate import Chain, Migrator
from graphrag_orm.schema import CreateStep, SchemaDefinition
from graphrag_orm.store import StatementEvent, Store
from graphrag_orm.store.connection import ConnectionSettings

REPO = Path(__file__).resolve().parents[1]
BENCH_PORT = 7697
BENCH_HOME = "home-bench"
BASE_URI = "https://bench.graphrag-orm.invalid/corpus/"
NEO4J_GRAPHRAG_PYTHON = REPO / "benchmarks" / ".venv-neo4j-graphrag" / "bin" / "python"
SCRATCH = REPO / ".benchmarks"  # git-ignored

# ------------------------------------------------------------------ the corpus

_ONSETS = ["b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "st", "tr"]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ou", "ea"]
_CODAS = ["", "", "n", "r", "s", "l", "t", "x", "nd", "rk"]
_FUNCTION_WORDS = ["the", "a", "of", "and", "to", "in", "is", "for", "on", "with", "as", "by", "that", "this", "it"]


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        syllables = rng.choice((1, 2, 2, 3, 3, 4))
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables))
        if 3 <= len(word) <= 14:
            words.add(word)
    return sorted(words)


@dataclass(frozen=True)
class Corpus:
    """Documents as (relative file name, Markdown text), in file-name order, and the vocabulary."""

    seed: int
    documents: tuple[tuple[str, str], ...]
    vocabulary: tuple[str, ...] = field(repr=False)

    @property
    def utf8_bytes(self) -> int:
        return sum(len(text.encode("utf-8")) for _, text in self.documents)

    def write(self, folder: Path) -> Path:
        """Write every document under ``folder`` (emptied first of earlier ``*.md`` files)."""
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.md"):
            old.unlink()
        for name, text in self.documents:
            (folder / name).write_text(text, encoding="utf-8")
        return folder


class MarkdownWriter:
    """The benchmarks' Markdown: a 6,000-word made-up vocabulary, Zipf-weighted (ranks
    shuffled once from the seed's generator), and documents written from a generator given.

    A document has a title, an introduction and three to five ``##`` sections (some with
    a ``###`` subsection) of prose paragraphs, with an occasional list or fenced code
    block, and leans on its own 40 topic words, so documents differ the way real ones
    do. With ``ChunkerOptions()`` (2,048 bytes, one paragraph of overlap) this gives about
    ten chunks per document. :func:`generate_corpus` draws every document from one
    generator; the scale corpus (``scale/corpus.py``) gives each its own, so any one can
    be written alone.
    """

    def __init__(self, rng: random.Random, size: int = 6_000) -> None:
        self.vocabulary = _vocabulary(rng, size)
        self.ranked = self.vocabulary[:]
        rng.shuffle(self.ranked)  # Zipf ranks independent of alphabetical order
        total = 0.0
        self.cumulative: list[float] = []
        for rank in range(len(self.ranked)):
            total += 1.0 / (rank + 1) ** 0.9
            self.cumulative.append(total)

    def document(self, rng: random.Random) -> str:
        """One document's Markdown, drawn from ``rng``."""
        topic = rng.sample(self.vocabulary, 40)
        parts = [f"# {self._heading(rng, topic, 4)}\n\n", self._paragraph(rng, topic) + "\n\n"]
        for _ in range(rng.randint(3, 5)):
            parts.append(f"## {self._heading(rng, topic, 3)}\n\n")
            parts.extend(self._block(rng, topic) for _ in range(rng.randint(4, 7)))
            if rng.random() < 0.3:
                parts.append(f"### {self._heading(rng, topic, 2)}\n\n")
                parts.extend(self._paragraph(rng, topic) + "\n\n" for _ in range(rng.randint(2, 4)))
        return "".join(parts)

    def _block(self, rng: random.Random, topic: Sequence[str]) -> str:
        """A paragraph, or now and then a list or a fenced code block."""
        roll = rng.random()
        if roll < 0.08:
            return "".join(f"- {self._sentence(rng, topic)}\n" for _ in range(rng.randint(3, 6))) + "\n"
        if roll < 0.12:
            body = "\n".join(f"{word}_{i} = {i}" for i, word in enumerate(rng.sample(list(topic), 6)))
            return f"```python\n{body}\n```\n\n"
        return self._paragraph(rng, topic) + "\n\n"

    def _sentence(self, rng: random.Random, topic: Sequence[str]) -> str:
        words: list[str] = []
        for _ in range(rng.randint(7, 18)):
            roll = rng.random()
            if roll < 0.35:
                words.append(rng.choice(_FUNCTION_WORDS))
            elif roll < 0.65:
                words.append(rng.choice(topic))
            else:
                words.extend(rng.choices(self.ranked, cum_weights=self.cumulative, k=1))
        text = " ".join(words)
        return text[0].upper() + text[1:] + rng.choice("...?")

    def _paragraph(self, rng: random.Random, topic: Sequence[str]) -> str:
        return " ".join(self._sentence(rng, topic) for _ in range(rng.randint(3, 7)))

    @staticmethod
    def _heading(rng: random.Random, topic: Sequence[str], words: int) -> str:
        return " ".join(word.capitalize() for word in rng.sample(list(topic), words))


def generate_corpus(seed: int = 52, documents: int = 2_000) -> Corpus:
    """``documents`` Markdown documents of 13 to 20 KB (:class:`MarkdownWriter`), the same bytes
    for the same seed: one generator draws the vocabulary, then every document in turn."""
    rng = random.Random(seed)
    writer = MarkdownWriter(rng)
    out = [(f"doc-{number:05d}.md", writer.document(rng)) for number in range(documents)]
    return Corpus(seed=seed, documents=tuple(out), vocabulary=tuple(writer.vocabulary))


_WORD = re.compile(r"[a-z]{3,}")


def generate_questions(corpus: Corpus, count: int = 200, seed: int = 7) -> list[str]:
    """``count`` questions of four to eight plain lower-case words from random passages.

    No Lucene syntax characters, so every contender can send the words as they are.
    """
    rng = random.Random(seed)
    questions: list[str] = []
    while len(questions) < count:
        _, text = rng.choice(corpus.documents)
        words = [w for w in _WORD.findall(text.lower()) if w not in _FUNCTION_WORDS]
        start = rng.randrange(max(1, len(words) - 40))
        window = words[start : start + 40]
        chosen = list(dict.fromkeys(rng.sample(window, min(len(window), rng.randint(4, 8)))))
        lead = rng.choice(("what is", "how does", "why", "where is", "which"))
        questions.append(f"{lead} {' '.join(chosen)}")
    return questions


# ------------------------------------------------------------------ the server


class BenchServer:
    """The benchmark's database: ``uri`` or NEO4J_URI when set, else its own local server.

    ``with BenchServer() as server``: ``server.settings`` connects, ``server.server_pid``
    is the local server's process (None for an external one). The local server (port
    7697 and home ``home-bench`` unless told otherwise) is stopped on exit only if this
    benchmark started it.
    """

    def __init__(
        self,
        *,
        port: int = BENCH_PORT,
        home: str = BENCH_HOME,
        uri: str | None = None,
        heap: str | None = None,
        transaction_max: str | None = None,
    ) -> None:
        self.local: LocalDbSettings | None = None
        self.started = False
        self.port, self.home = port, home
        #: The local server's heap and per-transaction memory bound (None: the local server's defaults).
        self.heap, self.transaction_max = heap, transaction_max
        self.uri = uri if uri is not None else os.environ.get("NEO4J_URI")
        self.settings = ConnectionSettings.from_env()

    def __enter__(self) -> BenchServer:
        if self.uri:
            self.settings = ConnectionSettings(
                uri=self.uri,
                user=os.environ.get("NEO4J_USER", "neo4j"),
                password=os.environ.get("NEO4J_PASSWORD", "graphrag-local"),
            )
            return self
        self.local = LocalDbSettings.from_env(home_name=self.home, port=self.port)
        if self.heap is not None:
            self.local = dataclasses.replace(self.local, heap=self.heap)
        if self.transaction_max is not None:
            bound = (("db.memory.transaction.max", self.transaction_max),)
            total = (("dbms.memory.transaction.total.max", self.transaction_max),)
            self.local = dataclasses.replace(self.local, extra_config=(*bound, *total))
        began = time.monotonic()
        result = start(self.local)
        self.started = not result.message.startswith("already")
        print(f"neo4j: {result.message} ({time.monotonic() - began:.1f} s, home tools/neo4j/{self.home})")
        self.settings = ConnectionSettings(uri=self.local.uri, password=self.local.password)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.local is not None and self.started:
            print(f"neo4j: {stop(self.local).message}")

    @property
    def server_pid(self) -> int | None:
        if self.local is None:
            return None
        try:
            return int(self.local.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None


async def reset_database(store: Store, extra: Sequence[SchemaDefinition] = ()) -> None:
    """Delete all data, drop every index and constraint, apply the toolkit's chain (and ``extra``) again."""
    await store.execute("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS", name="bench.wipe")
    for row in await store.read("SHOW CONSTRAINTS YIELD name RETURN name", name="bench.constraints"):
        await store.execute(f"DROP CONSTRAINT `{row['name']}` IF EXISTS", name="bench.drop")
    for row in await store.read(
        "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name", name="bench.indexes"
    ):
        await store.execute(f"DROP INDEX `{row['name']}` IF EXISTS", name="bench.drop")
    await Migrator(store, Chain.load()).apply()
    for definition in extra:
        await store.execute(CreateStep(definition=definition).cypher(), name="bench.create")


def floor_chunk_rows(
    document_id: str,
    content_hash: str,
    plan: ChunkPlan,
    texts: Sequence[str],
    vectors: Sequence[Sequence[float]],
    run: str,
) -> list[dict[str, Any]]:
    """The chunk rows a hand-written floor writes: the same ids and properties graphrag-orm stores."""
    return [
        {
            "id": chunk_id(document_id, content_hash, plan.fingerprint, c.start_byte, c.end_byte),
            "documentId": document_id,
            "order": c.order,
            "text": texts[i],
            "startByte": c.start_byte,
            "endByte": c.end_byte,
            "embedding": vectors[i],
            "embeddingSetId": OFFLINE_EMBEDDING_SET.id,
            "runId": run,
        }
        for i, c in enumerate(plan.chunks)
    ]


async def server_version(store: Store) -> str:
    row = (
        await store.read(
            "CALL dbms.components() YIELD versions, edition RETURN versions[0] AS version, edition",
            name="bench.version",
        )
    ).records[0]
    return f"{row['version']} {row['edition']}"


class StatementCounter:
    """Counts and times a store's statements by name while installed (``with StatementCounter(store)``).

    Reads the store's statement hook, never patches anything. ``counts`` and ``seconds``
    are per statement name; ``failed`` counts failed statements per (name, exception type).
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.counts: dict[str, int] = {}
        self.seconds: dict[str, float] = {}
        self.failed: dict[tuple[str, str], int] = {}
        self._remove: Any = None

    def __enter__(self) -> StatementCounter:
        self._remove = self.store.add_hook(self._seen)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._remove is not None:
            self._remove()
            self._remove = None

    def _seen(self, event: StatementEvent) -> None:
        self.counts[event.name] = self.counts.get(event.name, 0) + 1
        self.seconds[event.name] = self.seconds.get(event.name, 0.0) + event.seconds
        if event.error is not None:
            key = (event.name, event.error)
            self.failed[key] = self.failed.get(key, 0) + 1

    def total(self, *prefixes: str) -> int:
        """Statements whose names start with one of ``prefixes`` (all of them without)."""
        return sum(n for name, n in self.counts.items() if not prefixes or name.startswith(prefixes))

    def time(self, *prefixes: str) -> float:
        return sum(s for name, s in self.seconds.items() if not prefixes or name.startswith(prefixes))


# ------------------------------------------------------------------ the load


def _cpu_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine since boot."""
    with open("/proc/stat") as stat:
        fields = [int(v) for v in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def _process_jiffies(pid: int) -> int:
    """utime + stime + waited-for children's cutime + cstime of one process (0 when gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return sum(int(v) for v in fields[11:15])


@dataclass
class LoadReport:
    """CPU over one interval, in core-seconds and as shares of the machine's cores."""

    seconds: float
    machine_busy: float  # share of all cores busy, 0..1
    client_cpu: float  # core-seconds of this process and the subprocesses it waited for
    server_cpu: float  # core-seconds of the Neo4j server (0 when not ours)
    load_average: tuple[float, float, float]

    @property
    def ours_busy(self) -> float:
        """Share of all cores used by this benchmark, its subprocesses and the server."""
        cores = os.cpu_count() or 1
        return min(self.machine_busy, (self.client_cpu + self.server_cpu) / (self.seconds * cores))

    @property
    def others_busy(self) -> float:
        return max(0.0, self.machine_busy - self.ours_busy)

    def describe(self) -> str:
        return (
            f"machine {self.machine_busy:.0%} busy of {os.cpu_count()} cores (others {self.others_busy:.0%}, "
            f"load average {self.load_average[0]:.2f}); CPU client {self.client_cpu:.1f} s, "
            f"server {self.server_cpu:.1f} s"
        )


class LoadProbe:
    """Measures machine CPU and this benchmark's own CPU over an interval (Linux /proc; zeros elsewhere).

    The client is this process plus the subprocesses it has waited for (neo4j-graphrag's
    side); the server is the Neo4j process, when this benchmark knows its pid.
    """

    def __init__(self, server_pid: int | None) -> None:
        self.server_pid = server_pid
        self.available = os.path.exists("/proc/stat")
        self._began = 0.0
        self._machine = (0, 0)
        self._client = 0
        self._server = 0

    def __enter__(self) -> LoadProbe:
        self._began = time.monotonic()
        if self.available:
            self._machine = _cpu_jiffies()
            self._client = _process_jiffies(os.getpid())
            self._server = _process_jiffies(self.server_pid) if self.server_pid else 0
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def report(self) -> LoadReport:
        seconds = time.monotonic() - self._began
        if not self.available:
            return LoadReport(seconds, 0.0, 0.0, 0.0, os.getloadavg())
        tick = os.sysconf("SC_CLK_TCK")
        busy, total = _cpu_jiffies()
        machine_busy = (busy - self._machine[0]) / max(1, total - self._machine[1])
        client = (_process_jiffies(os.getpid()) - self._client) / tick
        server = ((_process_jiffies(self.server_pid) - self._server) / tick) if self.server_pid else 0.0
        return LoadReport(seconds, machine_busy, client, server, os.getloadavg())


def machine_description() -> str:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory = ""
    try:
        with open("/proc/meminfo") as meminfo:
            kib = int(meminfo.readline().split()[1])
            memory = f", {kib / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return f"{model}, {os.cpu_count()} cores{memory}; CPython {platform.python_version()}, {platform.system()}"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A Markdown table, columns padded (numbers right-aligned), ready to paste."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        padded = [
            str(c).rjust(w) if i and _numeric(str(c)) else str(c).ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    print(line(headers))
    print("|" + "|".join(("-" * (w + 1) + ":") if i else ("-" * (w + 2)) for i, w in enumerate(widths)) + "|")
    for row in rows:
        print(line(row))


def _numeric(cell: str) -> bool:
    return bool(re.match(r"^[-+]?[\d,.]+\s*(x|ms|s|%)?(\s*\(.*\))?$", cell))
