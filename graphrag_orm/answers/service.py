"""Answers: retrieve, ask the chat client for an answer with quotes, and check every quote.

An answer is ``Answered`` only when every citation is located, byte-exact up to the
forgiven differences of :mod:`graphrag_orm.citations`, in the evidence *item* it
names. Otherwise it is ``InsufficientEvidence`` with one reason, decided in this
order:

1. ``no-evidence``: retrieval returned no items (an empty scope included). The chat
   client is not called.
2. ``unreadable-response``: the reply is not the JSON asked for, is of another
   shape, or was cut off at the output limit (see :func:`~graphrag_orm.answers.prompt.parse_reply`).
3. ``model-declined``: the reply's ``insufficient`` holds text and it has no
   ``answer``, or its answer fails step 4 or 5 (the model's decline stands then,
   whatever the failed check was).
4. ``no-citations``: an answer without any citation.
5. ``citation-not-found``: any citation names a chunk that is not an evidence item
   (context, such as a neighbour, is never cited; ids are compared exactly) or
   quotes text that :func:`~graphrag_orm.citations.locate` cannot find in that
   item. One failed citation refuses the whole answer, after one repair turn
   (:mod:`~graphrag_orm.answers.repair`; ``AnswersOptions.repair_citations``): the
   model is told which quote was not found in which item and asked once more, and its
   second reply is judged by these same rules (``AnswerReceipt.repairs`` counts it).

An answer present wins when its citations verify, even beside a filled
``insufficient``: under the strict schema, where every field is required, small
models fill both (a 0.5B model did so in 6 of its 7 declines, one of them a right
answer). The check that makes an answer trustworthy is its citations, and they are
checked the same way whatever ``insufficient`` says.

An ``Answered`` answer's text is the reply's ``answer`` trimmed of surrounding
whitespace; its citations are the located ones (the stored text and span, never
the model's copy), in the reply's order, a repeated span kept once. A refusal has
its reason, no text and no citations.

A follow-up passes the conversation so far as ``history`` (earlier :class:`Turn`\\ s,
oldest first): one more chat call first rewrites the question so that it stands alone
(:mod:`graphrag_orm.answers.followups`), and the rewritten question is retrieved. The
retriever itself takes one standalone question and never sees the history.

Neither call retries: an exception from the retriever or the chat client (network,
rate limit, ``QuestionRefused`` for an empty or too long question) propagates, with
no answer. Nothing is written to the database.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field

from opentelemetry import trace

from graphrag_orm.answers.followups import rewrite
from graphrag_orm.answers.options import AnswersOptions
from graphrag_orm.answers.prompt import ReplyReading, answer_request, parse_reply
from graphrag_orm.answers.repair import repair_request, unfound_citation
from graphrag_orm.answers.streaming import AnswerTextDecoder
from graphrag_orm.answers.turns import Turn
from graphrag_orm.answers.values import Answer, AnswerReceipt, Completed, Delta, Disposition, Retrieved
from graphrag_orm.chat.base import ChatClient, ChatReply, ChatRequest
from graphrag_orm.citations import Citation, locate
from graphrag_orm.codes import ErrorCode, RefusalReason
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.evidence import Evidence, Rewrite
from graphrag_orm.retrieval import RetrievalOptions, Retriever
from graphrag_orm.retrieval.question import check_question
from graphrag_orm.tracing import SpanName, SpanRecorder, span, tracer

__all__ = ["AnswersService", "verify"]


@dataclass
class _Tally:
    """Chat calls and their tokens; a token count is known only when every call reported it."""

    calls: int = 0
    input_tokens: int | None = 0
    output_tokens: int | None = 0
    began: float = field(default_factory=time.monotonic)
    retrieved: float | None = None
    repairs: int = 0

    def add(self, reply: ChatReply) -> None:
        self.calls += 1
        usage = reply.usage
        given_in = usage.input_tokens if usage is not None else None
        given_out = usage.output_tokens if usage is not None else None
        self.input_tokens = None if self.input_tokens is None or given_in is None else self.input_tokens + given_in
        self.output_tokens = None if self.output_tokens is None or given_out is None else self.output_tokens + given_out

    def receipt(self) -> AnswerReceipt:
        now = time.monotonic()
        retrieved = self.retrieved if self.retrieved is not None else now
        return AnswerReceipt(
            chat_calls=self.calls,
            input_tokens=self.input_tokens if self.calls else None,
            output_tokens=self.output_tokens if self.calls else None,
            retrieval_seconds=round(retrieved - self.began, 6),
            answer_seconds=round(now - retrieved, 6),
            repairs=self.repairs,
        )


def verify(reading: ReplyReading, evidence: Evidence) -> tuple[str | None, tuple[Citation, ...], str | None]:
    """``(text, citations, None)`` for an answer whose every citation is located, else ``(None, (), reason)``.

    Applies steps 2 to 5 of the module's order to a parsed reply: an answer beside a
    decline stands when its citations verify, else the decline does. Never raises.
    """
    if reading.problem is not None:
        return None, (), RefusalReason.UNREADABLE_RESPONSE.value
    if reading.answer is None:
        reason = RefusalReason.MODEL_DECLINED if reading.declined is not None else RefusalReason.UNREADABLE_RESPONSE
        return None, (), reason.value
    failed = RefusalReason.MODEL_DECLINED if reading.declined is not None else None
    if not reading.citations:
        return None, (), (failed or RefusalReason.NO_CITATIONS).value
    located: list[Citation] = []
    for cited in reading.citations:
        item = evidence.item(cited.chunk_id)
        citation = locate(item, cited.quote) if item is not None else None
        if citation is None:
            return None, (), (failed or RefusalReason.CITATION_NOT_FOUND).value
        if citation not in located:
            located.append(citation)
    return reading.answer.strip(), tuple(located), None


class AnswersService:
    """Answers questions from retrieved evidence with checked citations, or refuses.

    ``options.max_output_tokens`` (1..32,768, default 2,048) bounds the answer call's
    reply; a reply cut off at it is ``unreadable-response``. ``history`` (a follow-up's
    earlier turns) costs one more chat call first.
    """

    def __init__(self, retriever: Retriever, chat: ChatClient, options: AnswersOptions | None = None) -> None:
        self.retriever = retriever
        self.chat = chat
        self.options = options or AnswersOptions()

    async def answer(
        self, question: str, *, history: Sequence[Turn] = (), retrieval: RetrievalOptions | None = None
    ) -> Answer:
        """The answer to ``question``, or a refusal with its reason (see the module's rules).

        ``retrieval`` is the retrieval's options (the retriever's own by default; ``self.options``
        are the answers' own). Raises
        ``QuestionRefused`` (``empty-question``, ``question-too-long``) before any call,
        the rewrite of a follow-up included, and whatever the retriever or chat client raises.
        """
        with span(SpanName.ANSWER) as traced:
            tally = _Tally()
            evidence = await self._evidence(question, history, retrieval, tally)
            if not evidence.items:
                answer = self._refused(evidence, RefusalReason.NO_EVIDENCE.value, tally)
            else:
                request = answer_request(evidence, self.options.max_output_tokens)
                reply = await self.chat.complete(request)
                tally.add(reply)
                answer = await self._judged_after_repair(request, reply, evidence, tally)
            _trace(traced, answer)
            return answer

    async def stream(
        self, question: str, *, history: Sequence[Turn] = (), retrieval: RetrievalOptions | None = None
    ) -> AsyncGenerator[Retrieved | Delta | Completed, None]:
        """``Retrieved`` once, ``Delta``\\ s as the answer text arrives, then ``Completed`` once.

        One streamed chat call with the same request as :meth:`answer`, judged the
        same way, so ``Completed.answer`` is what :meth:`answer` returns for the same
        reply (but for the receipt's timings). Deltas are provisional; a refusal
        after deltas has ``withdraws=True``. A reply that starts with
        ``insufficient`` gives no deltas, though its answer may still stand
        (then ``Completed`` carries the text). No evidence gives ``Retrieved`` and a
        ``no-evidence`` refusal, with no chat call.

        Closing this generator (``aclose()``, leaving ``contextlib.aclosing``) or
        cancelling the task reading it closes the chat stream, which stops the model
        call. A generator dropped without closing is closed only when the event loop
        finalises it, so close it. An exception from the chat client ends the
        stream without ``Completed``.
        """
        raw = tracer().start_span(SpanName.ANSWER.value, record_exception=False, set_status_on_exception=False)
        traced = SpanRecorder(raw)
        deltas = 0
        try:
            tally = _Tally()
            # The span is current only around awaits, never across a yield: an async
            # generator's context would otherwise leak into its consumer.
            with trace.use_span(raw, end_on_exit=False, record_exception=False, set_status_on_exception=False):
                evidence = await self._evidence(question, history, retrieval, tally)
            yield Retrieved(evidence=evidence)
            if not evidence.items:
                answer = self._refused(evidence, RefusalReason.NO_EVIDENCE.value, tally)
            else:
                decoder = AnswerTextDecoder()
                parts: list[str] = []
                final: ChatReply | None = None
                request = answer_request(evidence, self.options.max_output_tokens)
                chunks = self.chat.stream(request)
                try:
                    async for chunk in chunks:
                        if chunk.reply is not None:
                            final = chunk.reply
                            continue
                        parts.append(chunk.delta)
                        piece = decoder.feed(chunk.delta)
                        if piece:
                            deltas += 1
                            yield Delta(text=piece)
                            # Control to the event loop between deltas, whatever the chat client
                            # does: a reader's task can be cancelled before the next one is made.
                            await asyncio.sleep(0)
                finally:
                    closer = getattr(chunks, "aclose", None)
                    if closer is not None:
                        await closer()
                # A client that ends without a whole reply is read from its pieces;
                # with no finish reason, a cut-off reply is still caught as bad JSON.
                reply = final if final is not None else ChatReply(text="".join(parts))
                tally.add(reply)
                with trace.use_span(raw, end_on_exit=False, record_exception=False, set_status_on_exception=False):
                    answer = await self._judged_after_repair(request, reply, evidence, tally)
            _trace(traced, answer)
            traced.set("deltas", deltas)
        except (GeneratorExit, asyncio.CancelledError):
            traced.set("deltas", deltas)
            traced.fail("cancelled")
            raise
        except BaseException as error:
            code = getattr(error, "code", None)
            traced.fail(code if isinstance(code, str) else type(error).__name__)
            raise
        finally:
            # Ended before Completed is handed over: the span times the answer, not the
            # consumer, and closing the generator after Completed is not a cancellation.
            raw.end()
        yield Completed(answer=answer, withdraws=deltas > 0 and not answer.answered)

    async def _evidence(
        self, question: str, history: Sequence[Turn], retrieval: RetrievalOptions | None, tally: _Tally
    ) -> Evidence:
        options = retrieval or self.retriever.options
        # Checked here too, so a follow-up's rewrite call is never paid for a question
        # retrieval would refuse.
        check_question(question, options.max_question_chars)
        if any(not isinstance(turn, Turn) for turn in history):
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "AnswersService: every turn of history must be a Turn")
        if not history:
            evidence = await self.retriever.retrieve(question, options)
        else:
            rewritten = await rewrite(self.chat, question, history, options.max_question_chars)
            tally.add(rewritten.reply)
            retrieved = await self.retriever.retrieve(rewritten.standalone, options)
            evidence = retrieved.model_copy(
                update={
                    "rewrite": Rewrite(
                        asked=question,
                        standalone=rewritten.standalone,
                        turns_used=rewritten.turns_used,
                        outcome=rewritten.outcome.value,
                    ),
                    "limits_reached": (*retrieved.limits_reached, *rewritten.limits),
                }
            )
        tally.retrieved = time.monotonic()
        return evidence

    async def _judged_after_repair(
        self, request: ChatRequest, reply: ChatReply, evidence: Evidence, tally: _Tally
    ) -> Answer:
        """The reply judged; a citation that does not verify gets one repair turn, judged alike."""
        answer = self._judged(reply, evidence, tally)
        if answer.reason != RefusalReason.CITATION_NOT_FOUND or not self.options.repair_citations:
            return answer
        failure = unfound_citation(parse_reply(reply.text, truncated=reply.truncated), evidence)
        if failure is None:  # verify found one; kept for the type checker
            return answer
        second = await self.chat.complete(repair_request(request, reply.text, failure))
        tally.add(second)
        tally.repairs += 1
        return self._judged(second, evidence, tally)

    @staticmethod
    def _refused(evidence: Evidence, reason: str, tally: _Tally) -> Answer:
        return Answer(
            disposition=Disposition.INSUFFICIENT_EVIDENCE,
            text=None,
            citations=(),
            reason=reason,
            evidence=evidence,
            receipt=tally.receipt(),
        )

    @staticmethod
    def _judged(reply: ChatReply, evidence: Evidence, tally: _Tally) -> Answer:
        text, citations, reason = verify(parse_reply(reply.text, truncated=reply.truncated), evidence)
        if reason is not None:
            return AnswersService._refused(evidence, reason, tally)
        return Answer(
            disposition=Disposition.ANSWERED,
            text=text,
            citations=citations,
            reason=None,
            evidence=evidence,
            receipt=tally.receipt(),
        )


def _trace(traced: SpanRecorder, answer: Answer) -> None:
    """Counts and codes only: never the question, the text or a quote."""
    traced.set("disposition", answer.disposition.value)
    if answer.reason is not None:
        traced.set("reason", answer.reason)
    traced.set("items", len(answer.evidence.items))
    traced.set("citations", len(answer.citations))
    traced.set("calls", answer.receipt.chat_calls)
    traced.set("repairs", answer.receipt.repairs)
    if answer.receipt.input_tokens is not None:
        traced.set("input_tokens", answer.receipt.input_tokens)
    if answer.receipt.output_tokens is not None:
        traced.set("output_tokens", answer.receipt.output_tokens)
