"""The offline answerer (``ExtractiveChat``) on a documentation corpus nobody here wrote: right answers, right refusals.

Corpus: the FastAPI skill documentation that the ``fastapi`` wheel ships
(``fastapi/.agents/skills/fastapi``: ``SKILL.md`` and eight reference pages, MIT
licence, read from the installed package: no network). Its version is printed.

Each page is loaded and chunked as ``ingest`` does (the toolkit's loader and chunker,
1 KiB chunks so MiniLM reads each whole), every chunk embedded with the local MiniLM
model, and each question given the five chunks nearest to it by cosine (the vector
route alone) as its evidence. The answerer under test then answers or refuses, and
its reply goes through the same checks as any model's (``parse_reply``, ``verify``).

Questions (:data:`QUESTIONS`): 20 answerable, each with a phrase the quoted sentence
must hold and the page that holds it, and 6 the pages do not answer (the right reply
is a refusal). They were written from the pages before the answerer was run on them.

Contenders:

- ``words`` (before): ``ExtractiveChat()``, content-word overlap only;
- ``words+hashing``: ``ExtractiveChat(embedder=HashingEmbedder(256))``, the scoring
  with the hashing stand-in as its embedder (what an offline install has);
- ``words+minilm`` (after): ``ExtractiveChat(embedder=LocalEmbedder())``.

    .venv/bin/python benchmarks/extractive/run.py
    .venv/bin/python benchmarks/extractive/run.py --cases    # each question's outcome per contender

Results are in docs/benchmarks.md ("Offline answerer").
"""

from __future__ import annotations

import argparse
import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import fastapi

from graphrag_orm.answers.prompt import answer_request, parse_reply
from graphrag_orm.answers.service import verify
from graphrag_orm.chat.extractive import ExtractiveChat
from graphrag_orm.chunking import Chunker, ChunkerOptions, ChunkPlan
from graphrag_orm.embeddings.hashing import HashingEmbedder
from graphrag_orm.embeddings.local import LocalEmbedder
from graphrag_orm.evidence import Evidence, EvidenceItem
from graphrag_orm.loaders.registry import LoaderRegistry
from graphrag_orm.sources import Sources

CORPUS = Path(fastapi.__file__).parent / ".agents" / "skills" / "fastapi"
TOP = 5


@dataclass(frozen=True)
class Question:
    text: str
    phrase: str | None  # None: the pages do not answer it, the right reply is a refusal
    page: str | None = None


QUESTIONS: tuple[Question, ...] = (
    Question("What is the default scope of a dependency with yield?", 'default scope `"request"`', "dependencies.md"),
    Question("Which response class streams Server-Sent Events?", "EventSourceResponse", "streaming.md"),
    Question("How do I deploy to FastAPI Cloud?", "fastapi deploy", "fastapi-cloud.md"),
    Question("Which command runs the production server?", "fastapi run", "SKILL.md"),
    Question("When should I use max_concurrency on a dependency?", "exhaust a shared resource", "dependencies.md"),
    Question("Does FastAPI detect the database pool size?", "detect the pool size", "dependencies.md"),
    Question("Should I use ORJSONResponse or UJSONResponse?", "deprecated", "SKILL.md"),
    Question("Which library should I use for HTTP calls to other APIs?", "HTTPX", "other-tools.md"),
    Question("What should I use to work with SQL databases?", "SQLModel", "other-tools.md"),
    Question("What happens to request bodies when no limit is configured?", "remain unlimited", "SKILL.md"),
    Question("What does a max_body_size of 0 allow?", "allows only an empty body", "SKILL.md"),
    Question(
        "Which environment variable enables automatic OpenTelemetry exporter setup?",
        "FASTAPI_OTEL_AUTO_CONFIGURE",
        "SKILL.md",
    ),
    Question("Where are regular def path operations run?", "threadpool", "SKILL.md"),
    Question("What is the default extra setting of parameter models?", 'extra="ignore"', "parameter-models.md"),
    Question("What package do forms require?", "python-multipart", "parameter-models.md"),
    Question(
        "When is the concurrency slot of a dependency without yield released?",
        "released when the dependency function finishes",
        "dependencies.md",
    ),
    Question("Is the Cloud CLI included with fastapi[standard]?", "Cloud CLI is included", "fastapi-cloud.md"),
    Question("How do I serve a built static frontend app?", "app.frontend()", "SKILL.md"),
    Question("What should I use instead of a Pydantic RootModel?", "regular type annotations", "pydantic.md"),
    Question("How are plain objects sent in Server-Sent Events?", "JSON-serialized", "streaming.md"),
    Question("How do I configure CORS allowed origins?", None),
    Question("Which port does the development server listen on by default?", None),
    Question("How do I hash user passwords with bcrypt?", None),
    Question("Which Python version does FastAPI require?", None),
    Question("How do I write a WebSocket endpoint?", None),
    Question("How do I add rate limiting per client IP address?", None),
)


def _normalised(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


async def _chunks() -> list[EvidenceItem]:
    """Every chunk of the corpus as an evidence item (score 0 until ranked)."""
    loaders = LoaderRegistry.default()
    chunker = Chunker(ChunkerOptions(max_utf8_bytes=1_024))
    items: list[EvidenceItem] = []
    for path in sorted(CORPUS.rglob("*.md")):
        source = Sources.file(path)
        loaded = await loaders.load(source)
        plan = chunker.plan(loaded)
        for order, chunk in enumerate(plan.chunks):
            items.append(
                EvidenceItem(
                    chunk_id=f"{path.name}#{order}",
                    document_id=source.document_id,
                    source_uri=source.source_uri,
                    title=loaded.title,
                    text=ChunkPlan.chunk_text(loaded.utf8, chunk),
                    start_byte=chunk.start_byte,
                    end_byte=chunk.end_byte,
                    score=0.0,
                )
            )
    return items


async def _evidence(questions: Sequence[Question], items: list[EvidenceItem]) -> list[Evidence]:
    """Each question's five nearest chunks (MiniLM cosine), best first."""
    model = LocalEmbedder()
    chunk_vectors = [_normalised(v) for v in await model.embed([item.text for item in items])]
    asked = [_normalised(v) for v in await model.embed([q.text for q in questions])]
    found: list[Evidence] = []
    for question, vector in zip(questions, asked, strict=True):
        scores = [sum(a * b for a, b in zip(vector, chunk, strict=True)) for chunk in chunk_vectors]
        best = sorted(range(len(items)), key=lambda i: -scores[i])[:TOP]
        ranked = tuple(items[i].model_copy(update={"score": scores[i]}) for i in best)
        found.append(Evidence(question=question.text, items=ranked))
    return found


async def _outcome(chat: ExtractiveChat, question: Question, evidence: Evidence) -> str:
    reply = await chat.complete(answer_request(evidence, 256))
    text, citations, _reason = verify(parse_reply(reply.text), evidence)
    if text is None:
        return "refused right" if question.phrase is None else "refused wrongly"
    if question.phrase is None:
        return "answered, should refuse"
    return "right" if any(question.phrase in c.quote for c in citations) else "wrong, cited"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", action="store_true", help="print each question's outcome per contender")
    arguments = parser.parse_args()
    items = await _chunks()
    evidence = await _evidence(QUESTIONS, items)
    answerable = [(q, e) for q, e in zip(QUESTIONS, evidence, strict=True) if q.phrase is not None]
    in_top = sum(1 for q, e in answerable if any(item.chunk_id.startswith(f"{q.page}#") for item in e.items))
    print(f"corpus: fastapi {metadata.version('fastapi')} skill docs, {len(items)} chunks of 9 pages")
    print(f"retrieval: the right page in the top {TOP} for {in_top} of {len(answerable)} answerable questions")
    contenders = {
        "words": ExtractiveChat(),
        "words+hashing": ExtractiveChat(embedder=HashingEmbedder(256)),
        "words+minilm": ExtractiveChat(embedder=LocalEmbedder()),
    }
    print("| answerer | right answers (of 20) | wrong, cited | refused wrongly | right refusals (of 6) |")
    print("|---|---:|---:|---:|---:|")
    cases: dict[str, list[str]] = {}
    for name, chat in contenders.items():
        outcomes = [await _outcome(chat, q, e) for q, e in zip(QUESTIONS, evidence, strict=True)]
        cases[name] = outcomes
        wrong = outcomes.count("wrong, cited") + outcomes.count("answered, should refuse")
        print(
            f"| {name} | {outcomes.count('right')} | {wrong} | {outcomes.count('refused wrongly')} "
            f"| {outcomes.count('refused right')} |"
        )
    if arguments.cases:
        for number, question in enumerate(QUESTIONS):
            print(f"{question.text}: " + "; ".join(f"{name} {cases[name][number]}" for name in contenders))


if __name__ == "__main__":
    asyncio.run(main())
