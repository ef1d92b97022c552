"""A chat model's map and reduce over the community reports, every claim resting on verified findings.

:class:`GlobalAnswers` hands this module the reports and findings a question may read (inside
its scope, decided before anything is shown); :class:`ModelMapReduce` then:

- **maps**: ranks the reports by the content words their findings share with the question
  (ties by level), and packs them into at most ``max_map_calls`` calls of at most
  ``map_reports_per_call`` reports and about ``max_call_tokens`` input tokens (findings left
  out past it: ``GlobalCallTokens``; reports left out past the calls: ``GlobalMapCalls``).
  Each finding is shown with an id (``F1``, ``F2``, ... over the whole answer), its text and
  its stored quotes. ``lanes`` calls run at once. Each reply is strict JSON, ``{"points":
  [{"text", "findings": [ids]}]}``; a point's ids that call was not shown are dropped and
  counted (``findings_invented``), and a point left with none is dropped;
- **reduces**: one call shown the partial answers (points with their finding ids, in map
  order, at most ``max_call_tokens``), replying ``{"claims": [{"text", "findings": [ids]}]}``.
  An id no kept point carries is invented: dropped and counted.

A claim's citations are its findings' quotes located byte-exact in the chunks as stored *now*
(:func:`graphrag_orm.citations.locate`); a finding one of whose quotes no longer locates is
dropped and counted (``findings_dropped``), and a claim with no finding left is dropped. The
answer is refused (:class:`~graphrag_orm.codes.GlobalRefusal`) with ``model-declined`` when
the map found nothing or the reduce wrote no claim, ``unreadable-reply`` when every map reply,
or the reduce's, was not the JSON asked for (a reply cut at ``max_output_tokens`` is read as far
as it went: the entries it finished, not the one it was writing, with ``GlobalOutputTokens``
reported; one that finished none is unreadable),
``no-verified-claim`` when every claim cited only invented ids, and ``citation-not-found``
when the findings cited no longer locate. A failed call raises ``ModelCallFailed`` (a code,
never a traceback), as every model call of the toolkit does.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from graphrag_orm.chat import ChatClient
from graphrag_orm.chat.base import ChatReply, json_request
from graphrag_orm.chat.evidence_block import render_block, render_question
from graphrag_orm.chat.extractive import content_words
from graphrag_orm.chat.reply_json import CUT_REPLY, finished_part, is_utf8, read_object
from graphrag_orm.citations import Citation, locate
from graphrag_orm.codes import GlobalRefusal, LimitName
from graphrag_orm.communities.options import GlobalOptions
from graphrag_orm.communities.values import GlobalAnswer, GlobalClaim
from graphrag_orm.evidence import EvidenceItem
from graphrag_orm.values import Limit

__all__ = [
    "MAP_SCHEMA",
    "MAX_POINTS",
    "MAX_POINT_CHARS",
    "MAX_POINT_FINDINGS",
    "REDUCE_SCHEMA",
    "ModelMapReduce",
    "parse_cut_points",
    "parse_points",
]

#: Points (map) or claims (reduce) of one reply; more make the reply unreadable.
MAX_POINTS: Final = 20
#: Characters of one point or claim; a longer one makes the reply unreadable.
MAX_POINT_CHARS: Final = 2_000
#: Finding ids of one point or claim; more make the reply unreadable.
MAX_POINT_FINDINGS: Final = 8
#: Input tokens are estimated at four UTF-8 bytes a token, as the report preview does.
_BYTES_PER_TOKEN: Final = 4


def _schema(key: str) -> dict[str, Any]:
    entry = {
        "type": "object",
        "additionalProperties": False,
        "required": ["text", "findings"],
        "properties": {"text": {"type": "string"}, "findings": {"type": "array", "items": {"type": "string"}}},
    }
    return {
        "type": "object",
        "additionalProperties": False,
        "required": [key],
        "properties": {key: {"type": "array", "items": entry}},
    }


#: The strict JSON schemas of a map reply (``points``) and of the reduce's (``claims``).
MAP_SCHEMA: Final = _schema("points")
REDUCE_SCHEMA: Final = _schema("claims")

_MAP_INSTRUCTIONS: Final = (
    "You help answer a question about a whole corpus of documents from reports on communities of its "
    "knowledge graph. Each report has findings; each finding has an id, a sentence and the quotes of the "
    'documents that support it. Reply with a JSON object {"points": [...]}: each point one statement that '
    "helps answer the question, with the ids of the findings that support it. Use only the findings shown "
    f"and cite only their ids; write at most {MAX_POINTS} points of at most {MAX_POINT_CHARS:,} characters, "
    f"each citing at most {MAX_POINT_FINDINGS} ids. When the reports shown do not help answer the question, "
    "reply with no points."
)
_REDUCE_INSTRUCTIONS: Final = (
    "You write the answer to a question about a whole corpus of documents from partial answers. Each partial "
    "answer is a statement with the ids of the findings that support it. Reply with a JSON object "
    '{"claims": [...]}: the answer as claims, each one or two sentences with the ids of the findings it rests '
    "on, taken from the partial answers. Cite no other id; combine, compare and leave out what does not "
    f"answer the question; write at most {MAX_POINTS} claims of at most {MAX_POINT_CHARS:,} characters, each "
    f"citing at most {MAX_POINT_FINDINGS} ids. When the partial answers do not answer the question, reply "
    "with no claims."
)


@dataclass(frozen=True)
class Point:
    """A point of a map reply or a claim of the reduce's: its text and the finding ids it cites."""

    text: str
    findings: tuple[str, ...]


def parse_points(text: str, key: str) -> tuple[Point, ...] | str:
    """A reply read strictly as ``{key: [{"text", "findings"}]}``; a one-line problem when it is not."""
    value = read_object(text, {key})
    if isinstance(value, str):
        return value
    entries = value.get(key)
    if not isinstance(entries, list) or len(entries) > MAX_POINTS:
        return f"{key} is not a list of at most {MAX_POINTS}"
    points: list[Point] = []
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) != {"text", "findings"}:
            return f"an entry of {key} is not an object of text and findings"
        body, ids = entry["text"], entry["findings"]
        if not isinstance(body, str) or not body.strip() or len(body) > MAX_POINT_CHARS or not is_utf8(body):
            return f"an entry's text is not 1 to {MAX_POINT_CHARS:,} characters"
        if (
            not isinstance(ids, list)
            or len(ids) > MAX_POINT_FINDINGS
            or not all(isinstance(i, str) and is_utf8(i) for i in ids)
        ):
            return f"an entry's findings are not a list of at most {MAX_POINT_FINDINGS} ids"
        points.append(Point(body.strip(), tuple(dict.fromkeys(ids))))
    return tuple(points)


def parse_cut_points(text: str, key: str) -> tuple[Point, ...] | str:
    """A reply cut at the output limit, read as far as it went (:func:`finished_part`): the entries
    it finished, read as :func:`parse_points` reads them, without the last one it began; a one-line
    problem when it finished none."""
    finished = finished_part(text, key)
    return CUT_REPLY if finished is None else parse_points(finished, key)


@dataclass
class _Run:
    """One answer as it goes: the counts (``GlobalAnswer``'s fields of the same names), the limits, the refusal."""

    counts: Counter[str] = field(default_factory=Counter)
    limits: list[Limit] = field(default_factory=list)
    reports: list[str] = field(default_factory=list)
    refused: GlobalRefusal | None = None

    def add(self, reply: ChatReply) -> None:
        self.counts["calls"] += 1
        if reply.usage is not None:
            self.counts["input_tokens"] += reply.usage.input_tokens or 0
            self.counts["output_tokens"] += reply.usage.output_tokens or 0

    def limit(self, name: LimitName, value: int) -> None:
        if not any(limit.name == name for limit in self.limits):
            self.limits.append(Limit(name=name, value=value))


def _tokens(text: str) -> int:
    return -(-len(text.encode("utf-8")) // _BYTES_PER_TOKEN)


def _base_tokens(instructions: str, question: str, label: str) -> int:
    """A call's estimated tokens before its entries: the instructions, the question, the empty block."""
    return _tokens(f"{instructions}{render_question(question)}\n{render_block(label, [])}")


def _json_tokens(value: Any) -> int:
    return _tokens(render_block("x", value))


class ModelMapReduce:
    """One global answer by a chat model over the findings :class:`GlobalAnswers` may show it."""

    def __init__(self, chat: ChatClient, options: GlobalOptions) -> None:
        self.chat = chat
        self.options = options

    async def answer(
        self,
        question: str,
        writer: str,
        reports: Sequence[Mapping[str, Any]],
        findings: Sequence[Mapping[str, Any]],
        items_of: Callable[[Sequence[str]], Awaitable[dict[str, EvidenceItem]]],
        limits: Sequence[Limit] = (),
    ) -> GlobalAnswer:
        """Map over ``reports`` (rows of id, title), showing ``findings`` (rows of report, text, chunkIds,
        quotes), reduce, and verify each claim's findings in the chunks ``items_of`` reads now."""
        run = _Run(limits=list(limits))
        claims = await self._claims(question, reports, findings, items_of, run)
        citations: list[Citation] = []
        for claim in claims:
            citations.extend(c for c in claim.citations if c not in citations)
        answered = run.refused is None
        return GlobalAnswer(
            question=question,
            answer=" ".join(claim.text for claim in claims) if answered else None,
            citations=tuple(citations) if answered else (),
            claims=tuple(claims) if answered else (),
            reports=tuple(run.reports) if answered else (),
            refused=run.refused,
            writer=writer,
            limits_reached=tuple(run.limits),
            **run.counts,
        )

    async def _claims(
        self,
        question: str,
        reports: Sequence[Mapping[str, Any]],
        findings: Sequence[Mapping[str, Any]],
        items_of: Callable[[Sequence[str]], Awaitable[dict[str, EvidenceItem]]],
        run: _Run,
    ) -> list[GlobalClaim]:
        calls, shown = self._pack(question, reports, findings, run)
        run.counts["findings_shown"] = len(shown)
        lanes = asyncio.Semaphore(self.options.lanes)
        replies: list[tuple[Point, ...] | str] = [""] * len(calls)

        async def mapped(index: int, block: list[dict[str, Any]]) -> None:
            async with lanes:
                replies[index] = await self._call(_MAP_INSTRUCTIONS, question, "reports", block, "points", run)

        try:
            async with asyncio.TaskGroup() as group:
                for index, block in enumerate(calls):
                    group.create_task(mapped(index, block))
        except ExceptionGroup as failed:  # the first failed call, as a coded error
            raise failed.exceptions[0] from None
        points: list[Point] = []
        for block, reply in zip(calls, replies, strict=True):
            if isinstance(reply, str):
                run.counts["unreadable_replies"] += 1
                continue
            offered = {finding["id"] for report in block for finding in report["findings"]}
            points.extend(self._kept(reply, offered, run))
        if not points:
            readable = len(calls) - run.counts["unreadable_replies"]
            run.refused = GlobalRefusal.MODEL_DECLINED if readable else GlobalRefusal.UNREADABLE_REPLY
            return []
        partial: list[dict[str, Any]] = []
        budget = self.options.max_call_tokens - _base_tokens(_REDUCE_INSTRUCTIONS, question, "partial_answers")
        for point in points:
            entry = {"text": point.text, "findings": list(point.findings)}
            budget -= _json_tokens(entry)
            if budget < 0 and partial:
                run.limit(LimitName.GLOBAL_CALL_TOKENS, self.options.max_call_tokens)
                break
            partial.append(entry)
        reduced = await self._call(_REDUCE_INSTRUCTIONS, question, "partial_answers", partial, "claims", run)
        if isinstance(reduced, str):
            run.counts["unreadable_replies"] += 1
            run.refused = GlobalRefusal.UNREADABLE_REPLY
            return []
        carried = {finding_id for entry in partial for finding_id in entry["findings"]}
        kept = self._kept(reduced, carried, run)
        if not kept:
            run.refused = GlobalRefusal.NO_VERIFIED_CLAIM if reduced else GlobalRefusal.MODEL_DECLINED
            return []
        return await self._verify(kept, shown, items_of, run)

    def _pack(
        self,
        question: str,
        reports: Sequence[Mapping[str, Any]],
        findings: Sequence[Mapping[str, Any]],
        run: _Run,
    ) -> tuple[list[list[dict[str, Any]]], dict[str, Mapping[str, Any]]]:
        """The map calls' report blocks, best-matching reports first, and each shown finding by its id."""
        options = self.options
        by_report: dict[str, list[Mapping[str, Any]]] = {}
        for row in findings:
            by_report.setdefault(row["report"], []).append(row)
        wanted = content_words(question)

        def score(report: Mapping[str, Any]) -> int:
            return -max(
                len(wanted & content_words(" ".join([r["text"], *r["quotes"]]))) for r in by_report[report["id"]]
            )

        # sorted() is stable: ties keep the coarsest level first.
        ranked = sorted((report for report in reports if report["id"] in by_report), key=score)
        base = _base_tokens(_MAP_INSTRUCTIONS, question, "reports")
        calls: list[list[dict[str, Any]]] = []
        shown: dict[str, Mapping[str, Any]] = {}
        room = 0
        for report in ranked:
            rows = by_report[report["id"]]
            entries = [{"id": "", "text": row["text"], "quotes": list(row["quotes"])} for row in rows]
            cost = _json_tokens({"title": report["title"], "findings": entries})
            if calls and len(calls[-1]) < options.map_reports_per_call and cost <= room:
                block = calls[-1]
            elif len(calls) < options.max_map_calls:
                block, room = [], options.max_call_tokens - base
                calls.append(block)
            else:
                run.limit(LimitName.GLOBAL_MAP_CALLS, options.max_map_calls)
                break
            if cost > room:  # alone in its call and still too large: its first findings that fit
                kept = 1
                while kept < len(entries) and (
                    _json_tokens({"title": report["title"], "findings": entries[: kept + 1]}) <= room
                ):
                    kept += 1
                entries, cost = entries[:kept], room
                run.limit(LimitName.GLOBAL_CALL_TOKENS, options.max_call_tokens)
            room -= cost
            for entry, row in zip(entries, rows, strict=False):
                entry["id"] = f"F{len(shown) + 1}"
                shown[entry["id"]] = row
            block.append({"title": report["title"], "findings": entries})
        return calls, shown

    async def _call(
        self, instructions: str, question: str, label: str, block: list[dict[str, Any]], key: str, run: _Run
    ) -> tuple[Point, ...] | str:
        """One strict JSON call: the question block and ``block``; its points, or why the reply is unreadable."""
        request = json_request(
            instructions,
            f"{render_question(question)}\n{render_block(label, block)}",
            schema=MAP_SCHEMA if key == "points" else REDUCE_SCHEMA,
            name=f"global_{'map' if key == 'points' else 'reduce'}",
            max_output_tokens=self.options.max_output_tokens,
        )
        reply = await self.chat.complete(request)
        run.add(reply)
        if reply.truncated:
            run.limit(LimitName.GLOBAL_OUTPUT_TOKENS, self.options.max_output_tokens)
            return parse_cut_points(reply.text, key)
        return parse_points(reply.text, key)

    @staticmethod
    def _kept(points: Sequence[Point], offered: set[str], run: _Run) -> list[Point]:
        """The points with only the ids they were offered (the rest counted invented); a point left with none is dropped."""
        kept: list[Point] = []
        for point in points:
            known = tuple(i for i in point.findings if i in offered)
            run.counts["findings_invented"] += len(point.findings) - len(known)
            if known:
                kept.append(Point(point.text, known))
        return kept

    @staticmethod
    async def _verify(
        claims: Sequence[Point],
        shown: Mapping[str, Mapping[str, Any]],
        items_of: Callable[[Sequence[str]], Awaitable[dict[str, EvidenceItem]]],
        run: _Run,
    ) -> list[GlobalClaim]:
        """Each claim's findings located in the chunks as stored now; the claims with one left, or a refusal."""
        cited = list(dict.fromkeys(i for claim in claims for i in claim.findings))
        items = await items_of(sorted({c for i in cited for c in shown[i]["chunkIds"]}))
        located: dict[str, tuple[Citation, ...]] = {}
        for finding_id in cited:
            row = shown[finding_id]
            found = [
                locate(items[chunk], quote) if chunk in items else None
                for chunk, quote in zip(row["chunkIds"], row["quotes"], strict=True)
            ]
            if all(c is not None for c in found):
                located[finding_id] = tuple(c for c in found if c is not None)
            else:
                run.counts["findings_dropped"] += 1
        verified: list[GlobalClaim] = []
        for claim in claims:
            citations: list[Citation] = []
            for finding_id in (i for i in claim.findings if i in located):
                citations.extend(c for c in located[finding_id] if c not in citations)
                if shown[finding_id]["report"] not in run.reports:
                    run.reports.append(shown[finding_id]["report"])
            if citations:
                verified.append(GlobalClaim(text=claim.text, citations=tuple(citations)))
        if not verified:
            run.refused = GlobalRefusal.CITATION_NOT_FOUND
        return verified
