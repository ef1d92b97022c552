"""A real local model against the stand-ins: the novel sample's evaluation, extraction yield, Text2Cypher.

    make llm-serve MODEL=qwen2.5-coder-0.5b          # the model, on 127.0.0.1:8371
    .venv/bin/python benchmarks/real_model/run.py --model qwen2.5-coder-0.5b
    .venv/bin/python benchmarks/real_model/run.py --stand-ins
    .venv/bin/python benchmarks/real_model/run.py --model qwen2.5-coder-0.5b --replay   # no server

Three parts, each on an emptied graph of the benchmark's own Neo4j (port 7694, home
``home-realmodel``, unless ``NEO4J_URI`` is set):

1. **Extraction yield**: chapter I of Alice (examples/novel) ingested with the novel
   ontology; the things, facts and quotes the toolkit kept after grounding, and how many it
   pruned (by reason). Stand-in: the replies written by hand in ``examples/novel/alice.py``.
2. **The novel sample's evaluation** on that graph (``cases.jsonl``, 21 cases, k=10):
   citation validity, answer support (a cited quote holds a required phrase), abstention,
   coverage, refusals by reason. Stand-in: ``ExtractiveChat``.
3. **Text2Cypher** on the recall wiki (examples/recall, its extraction written by hand, so
   the graph is the same for every model): the 18 questions of
   ``tests/data/text2cypher/recall_questions.json``; a query counts as **valid** when it
   passed the gates and ran, and as **right** when its rows equal those of the hand-written
   reference query (values compared as a multiset of rows, column names and row order ignored); an unanswerable
   question counts as **refused** for any refusal (the model's decline, or a gate's,
   such as ``unknown-name`` for a guessed property). Stand-in: the reference replies
   themselves (so 15 of 15 right and 3 declined by construction).

With ``--model`` every reply is recorded into ``benchmarks/real_model/recordings/NAME.json``
(the recorder of :mod:`graphrag_orm.chat`: model name and date per entry), and the answers
and the queries to ``benchmarks/real_model/results/NAME.json`` for reading and labelling by
hand. ``--replay`` computes the figures again from the recording with no server, checks that
they are the committed results' (timings, labels and dates aside), lists what differs and
exits 1 if anything does; it writes nothing. ``make test`` replays both models this way
(``tests/real/test_real_benchmark.py``). The recordings were made with the embedder and the
retrieval settings of their day, which the script pins (``RECORDED_EMBEDDER``,
``RECORDED_RETRIEVAL``), so the prompts stay the recorded ones. A chapter that fails to
ingest stops the run with its error code (exit 2) rather than evaluating an empty graph.
The model's settings are the ``openai-compatible`` defaults (one lane, 512 answer tokens,
1,024 extraction tokens, 600 s timeout) unless the ``GRAPHRAG_*`` variables say otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
for path in (REPO, REPO / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from common import BenchServer  # noqa: E402

from examples.novel import run as novel  # noqa: E402
from examples.novel.alice import ONTOLOGY as NOVEL  # noqa: E402
from examples.novel.alice import extraction_reply as novel_reply  # noqa: E402
from examples.recall import run as recall  # noqa: E402
from examples.recall.bikes import BIKES  # noqa: E402
from examples.recall.bikes import extraction_reply as recall_reply  # noqa: E402
from graphrag_orm.chat import ChatClient, ChatRequest, ExtractiveChat, ScriptedChat  # noqa: E402
from graphrag_orm.chat.evidence_block import parse_question  # noqa: E402
from graphrag_orm.environment import chat_from_env  # noqa: E402
from graphrag_orm.evaluation import Evaluator, load_cases  # noqa: E402
from graphrag_orm.facade import GraphRag  # noqa: E402
from graphrag_orm.migrate import Chain, Migrator  # noqa: E402
from graphrag_orm.retrieval.options import Fusion, RetrievalOptions  # noqa: E402
from graphrag_orm.sources import Sources  # noqa: E402
from graphrag_orm.store import Store  # noqa: E402
from graphrag_orm.text2cypher import GraphQuestions, Text2CypherOptions  # noqa: E402

PORT = 7694
HOME = "home-realmodel"
#: The recordings were made with summed score fusion (the default before best-score) and no
#: passage stage (the default before it): pinned so that --replay keeps finding them. Re-record
#: to follow the defaults.
RECORDED_RETRIEVAL = RetrievalOptions(fusion=Fusion.SCORE, stages=())
#: ... and with the local MiniLM reading a chunk's first window, chunks fitted to it (the defaults
#: before e5-small-v2 and pooled windows): pinned for the same reason.
RECORDED_EMBEDDER = "all-MiniLM-L6-v2-int8"
T2C_CASES: list[dict[str, Any]] = json.loads(
    (REPO / "tests" / "data" / "text2cypher" / "recall_questions.json").read_text(encoding="utf-8")
)["cases"]


async def wipe(store: Store) -> None:
    """An empty database: every node, constraint and index gone (the sample's chain is applied after)."""
    await store.execute("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS", name="bench.wipe")
    for row in await store.read("SHOW CONSTRAINTS YIELD name RETURN name", name="bench.constraints"):
        await store.execute(f"DROP CONSTRAINT `{row['name']}` IF EXISTS", name="bench.drop")
    for row in await store.read("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name", name="bench.idx"):
        await store.execute(f"DROP INDEX `{row['name']}` IF EXISTS", name="bench.drop")


async def connected(rag: GraphRag, chain: Chain) -> None:
    await rag.connect(check_schema=False)
    await wipe(rag.store)
    await Migrator(rag.store, chain).apply()
    await rag.check_vector_index()


async def novel_parts(chat: ChatClient | None, embedding: Any) -> dict[str, Any]:
    """Extraction of chapter I and the evaluation of the 21 cases on the graph it made."""
    extraction_chat: ChatClient = chat if chat is not None else ScriptedChat(novel_reply)
    answer_chat: ChatClient = chat if chat is not None else ExtractiveChat()
    rag = GraphRag(
        embedding_set=embedding.embedding_set,
        embedder=embedding.embedder,
        chat=answer_chat,
        extraction_chat=extraction_chat,
        ontology=NOVEL,
        options=recall.sample_options(embedding),
    )
    await connected(rag, novel.chain_for(embedding.embedding_set))
    try:
        began = time.perf_counter()
        receipt = await rag.ingestion.ingest([novel.chapter_source()])
        ingest_seconds = time.perf_counter() - began
        if receipt.failed:  # never evaluate an empty graph: say why and stop
            codes = sorted({str(d.error_code) for d in receipt.documents if d.error_code})
            raise ChapterFailed(f"chapter I did not ingest ({', '.join(codes)})")
        extraction = receipt.extraction
        pruned = Counter(str(p.reason) for p in extraction.pruned) if extraction else Counter()
        yield_ = {
            "documents_failed": receipt.failed,
            "chunks": receipt.chunks_written,
            "things": extraction.entities if extraction else 0,
            "facts": extraction.facts if extraction else 0,
            "quotes": extraction.quotes if extraction else 0,
            "calls": extraction.calls if extraction else 0,
            "repaired": extraction.repaired if extraction else 0,
            "quarantined": len(extraction.quarantined) if extraction else 0,
            "pruned": sum(pruned.values()),
            "pruned_by_reason": dict(sorted(pruned.items())),
            **await mentions_located(rag.store),
            "seconds": round(ingest_seconds, 1),
        }
        print(f"extraction: {json.dumps(yield_)}", flush=True)
        began = time.perf_counter()
        report = await Evaluator(rag, k=10, retrieval=RECORDED_RETRIEVAL).run(load_cases(novel.CASES))
        totals = report.totals
        evaluation = {
            "cases": totals.cases,
            "errors": totals.errors,
            "answered": totals.answered,
            "citations": totals.citations,
            "valid_citations": totals.valid_citations,
            "citation_validity": totals.citation_validity,
            "support_judged": totals.support_judged,
            "supported": totals.supported,
            "answer_support": totals.answer_support,
            "abstained": totals.abstained,
            "abstention": totals.abstention,
            "wrongly_answered": totals.wrongly_answered,
            "wrongly_refused": totals.wrongly_refused,
            "failed_refusals": totals.failed_refusals,
            "coverage": totals.coverage,
            "reasons": dict(sorted(totals.reasons.items())),
            "seconds": round(time.perf_counter() - began, 1),
        }
        print(f"evaluation: {json.dumps(evaluation)}", flush=True)
        answers = [
            {
                "id": case.id,
                "question": case.question,
                "answerable": case.answerable,
                "outcome": str(case.outcome),
                "reason": case.reason,
                "error": case.error_code,
                "answer": case.answer,
                "supported": case.supported,
                "quotes": [c.quote for c in case.citations],
            }
            for case in report.cases
        ]
        return {"extraction": yield_, "evaluation": evaluation, "answers": answers}
    finally:
        await rag.close()


class ChapterFailed(Exception):
    """The chapter did not ingest: the figures would be an empty graph's."""


async def mentions_located(store: Store) -> dict[str, int]:
    """How many stored mentions there are, and how many are the bytes of their chunk at their offsets."""
    rows = await store.read(
        "MATCH ()-[m:MENTIONED_IN]->(c:Chunk) RETURN m.quote AS quote, m.startByte AS start, "
        "m.endByte AS end, c.text AS text, c.startByte AS chunkStart",
        name="bench.mentions",
    )
    located = 0
    for row in rows:
        stored = row["text"].encode("utf-8")[row["start"] - row["chunkStart"] : row["end"] - row["chunkStart"]]
        located += stored == row["quote"].encode("utf-8")
    return {"mentions": len(rows), "mentions_located": located}


class Reference:
    """The hand-written reference replies of the recall questions, by question."""

    def __init__(self) -> None:
        self.replies = {case["question"]: json.dumps(case["reply"]) for case in T2C_CASES}
        self.chat = ScriptedChat(self.respond)

    def respond(self, request: ChatRequest) -> str:
        return self.replies[parse_question(request.messages[1].content)]


async def text2cypher_part(chat: ChatClient | None, embedding: Any) -> dict[str, Any]:
    """The recall questions asked of the model; each query's rows against the reference's."""
    reference = Reference()
    rag = GraphRag(
        embedding_set=embedding.embedding_set,
        embedder=embedding.embedder,
        chat=reference.chat,
        extraction_chat=ScriptedChat(recall_reply),
        ontology=BIKES,
        options=recall.sample_options(embedding),
        text2cypher=Text2CypherOptions(),
    )
    await connected(rag, recall.chain_for(embedding.embedding_set))
    try:
        receipt = await rag.ingestion.ingest(Sources.folder(recall.HERE / "wiki", base_uri=recall.BASE_URI))
        assert receipt.failed == 0, "the recall wiki did not ingest"
        expected_of = rag.graph
        asked = GraphQuestions(rag.store, rag.model, chat, Text2CypherOptions(), BIKES) if chat else expected_of
        assert expected_of is not None and asked is not None
        rows: list[dict[str, Any]] = []
        began = time.perf_counter()
        for case in T2C_CASES:
            expected = await expected_of.ask(case["question"])
            got = await asked.ask(case["question"])

            def values(answer: Any) -> list[str]:
                """The rows' values in column order, as a multiset: no question asks for an order, and
                a query without ORDER BY returns its rows in whatever order the store holds them."""
                return sorted(repr([row.get(c) for c in answer.columns]) for row in answer.rows)

            answerable = "insufficient" not in case["reply"]
            rows.append(
                {
                    "id": case["id"],
                    "kind": case["kind"],
                    "answerable": answerable,
                    "query": got.query,
                    "ran": got.answered,
                    "refusal": str(got.refusal) if got.refusal else None,
                    "rows": len(got.rows),
                    "right": answerable and got.answered and values(got) == values(expected),
                }
            )
        answerable = [r for r in rows if r["answerable"]]
        summary = {
            "questions": len(rows),
            "answerable": len(answerable),
            "valid": sum(r["ran"] for r in answerable),
            "right": sum(r["right"] for r in answerable),
            "unanswerable_declined": sum(1 for r in rows if not r["answerable"] and r["refusal"] == "model-declined"),
            "unanswerable_refused": sum(1 for r in rows if not r["answerable"] and r["refusal"] is not None),
            "refusals": dict(sorted(Counter(r["refusal"] for r in rows if r["refusal"]).items())),
            "seconds": round(time.perf_counter() - began, 1),
        }
        print(f"text2cypher: {json.dumps(summary)}", flush=True)
        return {"summary": summary, "queries": rows}
    finally:
        await rag.close()


def recorded_embedder() -> Any:
    """The embedder the recordings were made with (the same evidence, so the same prompts), when
    installed; else the sample's choice, whose prompts then miss the recordings."""
    from graphrag_orm.embeddings import LocalEmbedder

    if LocalEmbedder.available(RECORDED_EMBEDDER):
        embedder = LocalEmbedder(RECORDED_EMBEDDER, long_texts="first")
        label = f"{embedder.label} (local model, offline)"
        return recall.Embedding(embedder.embedding_set(), embedder, label, False)
    return recall.choose_embedder()


def model_environment(model: str, url: str, replay: bool) -> Path:
    """Points the environment at the served model (record) or its recording (replay)."""
    recordings = HERE / "recordings" / f"{model}.json"
    os.environ.update(
        {
            "GRAPHRAG_MODEL_MODE": "replay" if replay else "record",
            "GRAPHRAG_PROVIDER": "openai-compatible",
            "OPENAI_BASE_URL": url,
            "GRAPHRAG_CHAT_MODEL": model,
            "GRAPHRAG_RECORDINGS": str(recordings),
            "GRAPHRAG_MAX_CALLS": os.environ.get("GRAPHRAG_MAX_CALLS", "1000"),
        }
    )
    os.environ.setdefault("GRAPHRAG_STRUCTURED_OUTPUT", "json_object")
    return recordings


#: What differs between two runs of the same replies: timings, labels and dates.
VOLATILE = frozenset({"seconds", "chat", "date", "embedder"})


def figures(value: Any) -> Any:
    """A result without its volatile fields: what a replay must reproduce exactly."""
    if isinstance(value, dict):
        return {key: figures(item) for key, item in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [figures(item) for item in value]
    return value


def differences(got: Any, committed: Any, path: str = "") -> list[str]:
    """Where a replay's figures differ from the committed results (volatile fields ignored)."""
    got, committed = figures(got), figures(committed)
    if isinstance(got, dict) and isinstance(committed, dict):
        found: list[str] = []
        for key in sorted(set(got) | set(committed)):
            where = f"{path}.{key}" if path else key
            if key not in got or key not in committed:
                found.append(f"{where}: only in the {'replay' if key in got else 'committed results'}")
            else:
                found.extend(differences(got[key], committed[key], where))
        return found
    if isinstance(got, list) and isinstance(committed, list) and len(got) == len(committed):
        return [
            d for i, (a, b) in enumerate(zip(got, committed, strict=True)) for d in differences(a, b, f"{path}[{i}]")
        ]
    return [] if got == committed else [f"{path}: replayed {got!r}, committed {committed!r}"]


async def run_parts(chat: ChatClient | None, label: str, parts: set[str]) -> dict[str, Any]:
    """The chosen parts on the database the NEO4J_* variables name (emptied first, each part)."""
    embedding = recorded_embedder()
    result: dict[str, Any] = {"chat": label, "embedder": embedding.label, "date": time.strftime("%F")}
    if "text2cypher" in parts:  # the short part first
        result["text2cypher"] = {"chat": label, "date": result["date"], **await text2cypher_part(chat, embedding)}
    if "novel" in parts:
        result["novel"] = {"chat": label, "date": result["date"], **await novel_parts(chat, embedding)}
    return result


def results_path(name: str) -> Path:
    return HERE / "results" / f"{name}.json"


async def main(arguments: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--model", help="the served model's name (qwen2.5-coder-0.5b or qwen2.5-coder-1.5b)")
    who.add_argument("--stand-ins", action="store_true", help="the offline stand-ins instead of a model")
    parser.add_argument("--url", default="http://127.0.0.1:8371/v1", help="the server's address, ending in /v1")
    parser.add_argument(
        "--replay",
        action="store_true",
        help="from the committed recording, no server: checks the figures against the committed results",
    )
    parser.add_argument("--parts", default="novel,text2cypher", help="which parts, comma-separated")
    parsed = parser.parse_args(arguments)
    name = "stand-ins" if parsed.stand_ins else parsed.model
    chat: ChatClient | None = None
    label = "stand-ins: replies written by hand (extraction, Text2Cypher), ExtractiveChat (answers)"
    if parsed.model:
        model_environment(parsed.model, parsed.url, parsed.replay)
        chat, label, _mode = chat_from_env()
    parts = {p.strip() for p in parsed.parts.split(",") if p.strip()}
    print(f"{name}: {label}", flush=True)
    with BenchServer(port=PORT, home=HOME) as server:
        os.environ["NEO4J_URI"] = server.settings.uri
        os.environ["NEO4J_PASSWORD"] = server.settings.password
        try:
            result = {"name": name, **await run_parts(chat, label, parts)}
        except ChapterFailed as failed:
            print(f"stopped: {failed}", file=sys.stderr)
            return 2
    out = results_path(name)
    kept = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    if parsed.replay:  # the recorded run's results stay; the replay must reproduce their figures
        found = differences({k: result[k] for k in parts}, {k: kept.get(k) for k in parts})
        for line in found:
            print(f"differs: {line}")
        print(f"replay of {name}: {'figures differ' if found else 'the committed figures, exactly'}")
        return 1 if found else 0
    # A run of some parts keeps the other parts' figures.
    result = {**{k: v for k, v in kept.items() if k in ("novel", "text2cypher")}, **result}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"written to {out.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
