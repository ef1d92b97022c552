"""Who writes a community's report: the extractive stand-in (offline) or a chat model.

A writer is shown one community (:class:`ReportInput`: its members, its facts and the
passages that state them) and returns a :class:`ReportDraft`: a title and findings, each
citing passages by chunk id and quote. A writer's citations are claims; the report run
(:mod:`graphrag_orm.communities.reports`) locates every quote byte-exact in the passage it
names and drops a finding that does not verify.

- :class:`ExtractiveReportWriter` is not a model: per fact, in order, it cites the first
  sentence of a passage that names both ends of the fact (else the first sentence naming
  each, two quotes of the one passage), and words the finding from the fact itself ("BK-7
  has part BC-310."). It never calls anything, so tests, the demo and CI build reports
  offline, and the same inputs give the same report.
- :class:`ChatReportWriter` asks a chat model (the toolkit's chat interface) for one strict
  JSON report per community, one call each, the reply bounded by ``max_output_tokens``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, Protocol

from graphrag_orm.chat import ChatClient
from graphrag_orm.chat.base import ChatRequest, json_request
from graphrag_orm.chat.evidence_block import render_block, render_evidence
from graphrag_orm.chat.reply_json import CUT_REPLY, finished_part, is_utf8, read_object
from graphrag_orm.citations import CitationRules
from graphrag_orm.communities.options import ReportOptions
from graphrag_orm.evidence import EvidenceItem

__all__ = [
    "EXTRACTIVE_WRITER",
    "MAX_FINDING_CHARS",
    "MAX_FINDING_CITATIONS",
    "MAX_TITLE_CHARS",
    "REPORT_SCHEMA",
    "REPORT_SCHEMA_NAME",
    "ChatReportWriter",
    "DraftFinding",
    "ExtractiveReportWriter",
    "FactPassage",
    "ReportDraft",
    "ReportFact",
    "ReportInput",
    "ReportWriter",
    "parse_cut_report",
    "parse_report",
]

#: The extractive stand-in's label, stored as the report's writer.
EXTRACTIVE_WRITER: Final = "extractive-stand-in"
#: Characters of a report's title; a longer one makes the reply unreadable.
MAX_TITLE_CHARS: Final = 300
#: Characters of one finding's text; a longer one makes the reply unreadable.
MAX_FINDING_CHARS: Final = 2_000
#: Citations of one finding; more make the reply unreadable.
MAX_FINDING_CITATIONS: Final = 4
#: Members named in an extractive title.
_TITLE_MEMBERS: Final = 3


@dataclass(frozen=True)
class FactPassage:
    """A chunk where a fact was grounded: both ends are mentioned in it (the stored mention quotes)."""

    chunk_id: str
    source_mentions: tuple[str, ...]
    target_mentions: tuple[str, ...]


@dataclass(frozen=True)
class ReportFact:
    """One fact among a community's members, by its ends' names, with the passages that ground it."""

    source: str
    type: str
    target: str
    documents: int
    passages: tuple[FactPassage, ...] = ()


@dataclass(frozen=True)
class ReportInput:
    """What a writer is shown of one community: members (most connected first), facts, passages."""

    community_id: str
    level: int
    members: tuple[str, ...]
    facts: tuple[ReportFact, ...]
    passages: tuple[EvidenceItem, ...]


@dataclass(frozen=True)
class DraftFinding:
    """A writer's finding: its text and ``(chunk id, quote)`` citations, not yet verified."""

    text: str
    citations: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ReportDraft:
    """A writer's report before verification; ``problem`` says why a reply was unreadable."""

    title: str
    findings: tuple[DraftFinding, ...] = ()
    problem: str | None = None
    #: Findings left out because the reply was cut at the output limit while writing them.
    cut: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class ReportWriter(Protocol):
    """Writes one community's report; ``label`` is stored as the report's writer."""

    @property
    def label(self) -> str: ...

    def request_bytes(self, source: ReportInput) -> int:
        """UTF-8 bytes of the request :meth:`write` would send (0 when it sends none)."""
        ...

    async def write(self, source: ReportInput) -> ReportDraft: ...


def _verb(fact_type: str) -> str:
    return fact_type.lower().replace("_", " ")


# A sentence ends after ., !, ? or … followed by whitespace; a line break ends one too.
_SENTENCE_END: Final = re.compile(r"(?<=[.!?…])\s+|\n+")


def _sentences(text: str) -> list[str]:
    pieces = (piece.strip() for piece in _SENTENCE_END.split(text))
    elisions = CitationRules.ELISIONS
    return [p for p in pieces if p and sum(p.count(form) for form in elisions) <= CitationRules.MAX_ELISIONS]


def _naming(sentence: str, mentions: tuple[str, ...]) -> bool:
    return any(mention and mention in sentence for mention in mentions)


def _sentences_naming(text: str, first: tuple[str, ...], second: tuple[str, ...]) -> tuple[str, ...]:
    """The first sentence naming both ends; else the first naming each (two quotes); else none."""
    sentences = _sentences(text)
    for sentence in sentences:
        if _naming(sentence, first) and _naming(sentence, second):
            return (sentence,)
    one = next((s for s in sentences if _naming(s, first)), None)
    other = next((s for s in sentences if _naming(s, second)), None)
    return (one, other) if one is not None and other is not None else ()


def _title(source: ReportInput) -> str:
    named = list(source.members[:_TITLE_MEMBERS])
    rest = len(source.members) - len(named)
    if rest > 0:
        return f"{', '.join(named)} and {rest:,} more"
    if len(named) > 1:
        return f"{', '.join(named[:-1])} and {named[-1]}"
    return named[0] if named else source.community_id


class ExtractiveReportWriter:
    """The offline stand-in: findings worded from the facts, each citing a sentence that states it.

    Not a model, and never shown as one: the stored writer is ``extractive-stand-in``.
    A fact none of whose passages names both its ends in its sentences gives no finding.
    """

    label = EXTRACTIVE_WRITER

    def request_bytes(self, source: ReportInput) -> int:
        return 0

    async def write(self, source: ReportInput) -> ReportDraft:
        items = {item.chunk_id: item for item in source.passages}
        findings: list[DraftFinding] = []
        for fact in source.facts:
            for passage in fact.passages:
                item = items.get(passage.chunk_id)
                if item is None:
                    continue
                quotes = _sentences_naming(item.text, passage.source_mentions, passage.target_mentions)
                if quotes:
                    text = f"{fact.source} {_verb(fact.type)} {fact.target}."
                    findings.append(DraftFinding(text, tuple((item.chunk_id, quote) for quote in quotes)))
                    break
        return ReportDraft(title=_title(source), findings=tuple(findings))


REPORT_SCHEMA_NAME: Final = "community_report"
_CITATION_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["chunkId", "quote"],
    "properties": {"chunkId": {"type": "string"}, "quote": {"type": "string"}},
}
#: The strict JSON schema of a report reply.
REPORT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["title", "findings"],
    "properties": {
        "title": {"type": "string"},
        "findings": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["text", "citations"],
                "properties": {
                    "text": {"type": "string"},
                    # At least one: a grammar-constrained local model otherwise writes findings citing nothing.
                    "citations": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": MAX_FINDING_CITATIONS,
                        "items": _CITATION_SCHEMA,
                    },
                },
            },
        },
    },
}
_INSTRUCTIONS: Final = (
    "You write a short report on one community of a knowledge graph: things joined by facts, with the "
    "passages that state those facts. Reply with a JSON object: a title naming what joins the community, "
    "and findings, each one sentence about the community. Every finding cites at least one passage of the "
    "evidence block by its chunkId, with a quote of the passage's exact words that supports it. Use only "
    f"the passages; write at most {{findings}} findings, each at most {MAX_FINDING_CHARS:,} characters, "
    f"with at most {MAX_FINDING_CITATIONS} citations. A finding whose quote is not in its passage is dropped."
)


def parse_report(text: str, *, max_findings: int) -> ReportDraft:
    """A reply read strictly as a report; an unusable one is a draft with its ``problem`` and no finding."""
    value = read_object(text, {"title", "findings"})
    if isinstance(value, str):
        return ReportDraft(title="", problem=value)
    title, findings = value.get("title"), value.get("findings")
    if not isinstance(title, str) or not title.strip() or len(title) > MAX_TITLE_CHARS or not is_utf8(title):
        return ReportDraft(title="", problem=f"the title is not a string of 1 to {MAX_TITLE_CHARS} characters")
    if not isinstance(findings, list):
        return ReportDraft(title="", problem="findings is not a list")
    drafts: list[DraftFinding] = []
    for finding in findings[: max_findings + 1]:
        if not isinstance(finding, dict) or set(finding) != {"text", "citations"}:
            return ReportDraft(title="", problem="a finding is not an object of text and citations")
        body, citations = finding["text"], finding["citations"]
        if not isinstance(body, str) or not body.strip() or len(body) > MAX_FINDING_CHARS or not is_utf8(body):
            return ReportDraft(title="", problem=f"a finding's text is not 1 to {MAX_FINDING_CHARS:,} characters")
        if not isinstance(citations, list) or len(citations) > MAX_FINDING_CITATIONS:
            return ReportDraft(
                title="", problem=f"a finding's citations are not a list of at most {MAX_FINDING_CITATIONS}"
            )
        cited: list[tuple[str, str]] = []
        for citation in citations:
            if not isinstance(citation, dict) or set(citation) != {"chunkId", "quote"}:
                return ReportDraft(title="", problem="a citation is not an object of chunkId and quote")
            chunk_id, quote = citation["chunkId"], citation["quote"]
            if not isinstance(chunk_id, str) or not isinstance(quote, str) or not is_utf8(quote):
                return ReportDraft(title="", problem="a citation's chunkId or quote is not a string")
            cited.append((chunk_id, quote))
        drafts.append(DraftFinding(body.strip(), tuple(cited)))
    return ReportDraft(title=title.strip(), findings=tuple(drafts))


def parse_cut_report(text: str, *, max_findings: int) -> ReportDraft:
    """A reply cut at the output limit, read as far as it went (:func:`finished_part`).

    The title and every finding the reply finished are read as :func:`parse_report` reads a
    whole reply; the last finding it began is left out (``cut``: the cut may have fallen inside
    its text or its citations). A reply cut before its title, or before it finished a finding,
    is a draft with a ``problem``.
    """
    finished = finished_part(text, "findings")
    if finished is None:
        return ReportDraft(title="", problem=CUT_REPLY)
    draft = parse_report(finished, max_findings=max_findings)
    if draft.problem is not None:
        return ReportDraft(title="", problem=f"{CUT_REPLY}, and what it finished is not a report: {draft.problem}")
    return ReportDraft(title=draft.title, findings=draft.findings, cut=1)


class ChatReportWriter:
    """A chat model writes each report: one strict JSON call per community, its reply bounded.

    A reply that is not a report gives a draft with a ``problem``; the run counts it
    ``unreadable-report`` and stores nothing for it. A reply cut at the output limit keeps
    the findings it finished (:func:`parse_cut_report`; the one it was writing is counted
    ``cut-finding``). A failed call (``ModelCallFailed``) stops the run before anything is
    written.
    """

    def __init__(self, chat: ChatClient, options: ReportOptions | None = None) -> None:
        self.chat = chat
        self.options = options or ReportOptions()
        self.label = str(getattr(chat, "model", None) or type(chat).__name__)

    def request(self, source: ReportInput) -> ChatRequest:
        """The one request for ``source``: the community block, then the evidence block of its passages."""
        community = {
            "members": list(source.members),
            "facts": [[fact.source, fact.type, fact.target] for fact in source.facts],
        }
        user = f"{render_block('community', community)}\n{render_evidence(source.passages)}"
        return json_request(
            _INSTRUCTIONS.format(findings=self.options.max_findings),
            user,
            schema=REPORT_SCHEMA,
            name=REPORT_SCHEMA_NAME,
            max_output_tokens=self.options.max_output_tokens,
        )

    def request_bytes(self, source: ReportInput) -> int:
        return sum(len(message.content.encode("utf-8")) for message in self.request(source).messages)

    async def write(self, source: ReportInput) -> ReportDraft:
        reply = await self.chat.complete(self.request(source))
        usage = reply.usage
        input_tokens = (usage.input_tokens or 0) if usage else 0
        output_tokens = (usage.output_tokens or 0) if usage else 0
        if reply.truncated:
            draft = parse_cut_report(reply.text, max_findings=self.options.max_findings)
        else:
            draft = parse_report(reply.text, max_findings=self.options.max_findings)
        return ReportDraft(
            title=draft.title,
            findings=draft.findings,
            problem=draft.problem,
            cut=draft.cut,
            calls=1,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
        )
