"""The extractor: one chat call per chunk with the ontology's strict schema, then checks.

Calls run in the ingestion's bounded lanes with its retry policy. A reply that is not
JSON for the schema is asked for once more, with what was wrong (not the earlier
reply, which saves tokens); a second unreadable reply is quarantined (``truncated`` when
it was cut at the output limit) and the chunk contributes nothing. A model call that
fails after its retries fails the whole document with ``extraction-failed``.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from graphrag_orm.chat import ChatClient, ChatMessage, ChatReply, ChatRequest
from graphrag_orm.chat.base import json_request
from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.errors import Unreadable
from graphrag_orm.extraction.grounding import DocumentKnowledge, ExtractionChunk, Grounder, Verifier
from graphrag_orm.extraction.options import ExtractionOptions
from graphrag_orm.extraction.reply import RawExtraction, parse_reply
from graphrag_orm.extraction.summary import ExtractionSummary, QuarantinedReply
from graphrag_orm.ontology import EXTRACTOR_VERSION, ModelSchema, Ontology
from graphrag_orm.ontology.model_schema import ItemBounds
from graphrag_orm.retry import RetryPolicy, RetryTally
from graphrag_orm.tracing import SpanName, span

__all__ = ["SCHEMA_NAME", "Extractor"]

SCHEMA_NAME = "extraction"


@dataclass
class _Usage:
    input_tokens: int | None = 0
    output_tokens: int | None = 0
    reasoning_tokens: int | None = 0
    calls: int = 0

    def add(self, reply: ChatReply) -> None:
        self.calls += 1
        usage = reply.usage
        if usage is None:
            self.input_tokens = self.output_tokens = self.reasoning_tokens = None
            return
        if self.input_tokens is not None:
            self.input_tokens += usage.input_tokens or 0
        if self.output_tokens is not None:
            self.output_tokens += usage.output_tokens or 0
        if self.reasoning_tokens is not None:
            self.reasoning_tokens += usage.reasoning_tokens or 0


class Extractor:
    """Extracts, checks, grounds and resolves the knowledge of one document at a time."""

    def __init__(
        self,
        ontology: Ontology,
        chat: ChatClient,
        options: ExtractionOptions | None = None,
        *,
        verifier: Verifier | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.ontology = ontology
        self.chat = chat
        self.options = options or ExtractionOptions()
        options = self.options
        bounds = ItemBounds(
            entities=options.max_entities_per_chunk,
            relationships=options.max_relationships_per_chunk,
            quotes=options.max_quotes_per_chunk,
            names=options.max_mentions_per_entity,
        )
        self.schema = ModelSchema.from_ontology(ontology, bounds)
        self.grounder = Grounder(ontology, self.options, verifier)
        self.retry = retry or RetryPolicy()
        self._instructions = self.schema.to_prompt_text()
        self._json_schema = self.schema.to_json_schema()

    @property
    def fingerprint(self) -> str:
        """Changes whenever what is asked for, its bounds, or how it is stored change (joins the settings fingerprint)."""
        settings = hashlib.sha256(self.options.to_json().encode("utf-8")).hexdigest()[:16]
        return f"{EXTRACTOR_VERSION}:{self.ontology.fingerprint}:{self.schema.fingerprint}:{settings}"

    def request(self, chunk_text: str, problem: str | None = None) -> ChatRequest:
        """The request for one chunk (and, with ``problem``, the one repair ask)."""
        repair: tuple[ChatMessage, ...] = ()
        if problem is not None:
            repair = (
                ChatMessage(
                    role="user",
                    content=f"Your previous reply could not be used ({problem}). "
                    "Reply again with only a JSON object for the schema.",
                ),
            )
        return json_request(
            self._instructions,
            f"Passage:\n{chunk_text}",
            schema=self._json_schema,
            name=SCHEMA_NAME,
            max_output_tokens=self.options.max_output_tokens,
            strict=self.options.strict_schema,
            then=repair,
        )

    async def extract(
        self,
        chunks: Sequence[ExtractionChunk],
        lanes: asyncio.Semaphore,
        tally: RetryTally | None = None,
        *,
        run_id: str = "",
    ) -> tuple[DocumentKnowledge, ExtractionSummary]:
        """Every chunk's knowledge, merged in chunk order; raises ``ModelCallFailed`` when a call fails."""
        usage = _Usage()
        quarantined: list[QuarantinedReply] = []
        repaired = 0

        async def one(chunk: ExtractionChunk) -> RawExtraction | None:
            nonlocal repaired
            async with lanes:
                with span(SpanName.EXTRACT, run_id=run_id, document_id=chunk.document_id) as traced:
                    reply = await self._call(self.request(chunk.text), tally, usage)
                    try:
                        return self._parse(reply)
                    except Unreadable as first:
                        if not self.options.retry_unreadable_replies:
                            quarantined.append(self._quarantine(chunk, reply, first))
                            traced.set("outcome", "quarantined")
                            return None
                        retry = await self._call(self.request(chunk.text, first.problem), tally, usage)
                        try:
                            parsed = self._parse(retry)
                        except Unreadable as second:
                            quarantined.append(self._quarantine(chunk, retry, second))
                            traced.set("outcome", "quarantined")
                            return None
                        repaired += 1
                        traced.set("outcome", "repaired")
                        return parsed

        tasks = [asyncio.create_task(one(chunk)) for chunk in chunks]
        try:
            results = await asyncio.gather(*tasks)
        except BaseException:
            # One chunk's call failed the document: stop paying for the others.
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        knowledge = DocumentKnowledge()
        for chunk, raw in zip(chunks, results, strict=True):
            if raw is not None:
                await self.grounder.add_chunk(knowledge, chunk, raw)
        summary = ExtractionSummary(
            chunks=len(chunks),
            calls=usage.calls,
            entities=len(knowledge.things),
            facts=len(knowledge.facts),
            mentions=sum(len(thing.mentions) for thing in knowledge.things.values()),
            quotes=len(knowledge.quotes),
            flipped=knowledge.flipped,
            repaired=repaired,
            pruned=tuple(knowledge.pruned),
            quarantined=tuple(quarantined),
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            reasoning_tokens=usage.reasoning_tokens,
        )
        return knowledge, summary

    async def _call(self, request: ChatRequest, tally: RetryTally | None, usage: _Usage) -> ChatReply:
        reply = await self.retry.run(
            lambda: self.chat.complete(request), code=DocumentErrorCode.EXTRACTION_FAILED.value, tally=tally
        )
        usage.add(reply)
        return reply

    def _parse(self, reply: ChatReply) -> RawExtraction:
        if reply.truncated:
            raise Unreadable("the reply was cut off at the output limit")
        return parse_reply(
            reply.text,
            max_bytes=self.options.max_reply_bytes,
            max_depth=self.options.max_json_depth,
            payload=self.ontology.fact_payload,
        )

    def _quarantine(self, chunk: ExtractionChunk, reply: ChatReply, problem: Unreadable) -> QuarantinedReply:
        return QuarantinedReply(
            chunk_id=chunk.chunk_id,
            code="truncated" if reply.truncated else "unreadable",
            problem=problem.problem,
            text=reply.text[: self.options.quarantine_text_chars],
        )
