"""``GraphQuestions.ask``: one model call writes a query, the sandbox runs it, the rows come back.

For each question, in order:

1. the question is checked (:func:`~graphrag_orm.retrieval.question.check_question`):
   ``QuestionRefused`` with ``empty-question``, ``question-too-long`` (over
   ``max_question_chars``) or ``invalid-question`` is *raised*, before any call;
2. one chat call with the question and the schema text (:mod:`.schema_text`), asking for
   ``{"cypher": ...}`` or ``{"insufficient": ...}`` (:mod:`.prompt`); a reply that is
   not that JSON is the refusal ``unreadable-response``, a decline without a query
   ``model-declined``. A query present goes on, even beside a decline (small models
   under the strict schema fill both);
3. the query goes through :class:`~graphrag_orm.store.sandbox.CypherSandbox`: the text
   gate (with ``max_query_chars``), EXPLAIN's checks (among them ``unknown-name``: a
   label, relationship type or property key the database has never held and the schema
   text does not show, so a guessed ``b.price`` is refused rather than read as nulls),
   then a read transaction with ``timeout_seconds``, at most ``max_rows`` rows read,
   values made plain and bounded. A :class:`~graphrag_orm.errors.QueryRefused` becomes
   the refusal of the same code (``not-allowed``, ``invalid-query``, ``not-read-only``,
   ``query-failed``, ``query-timeout``, ``too-deep``, ``regex-not-allowed``,
   ``range-too-large``, ``vector-not-readable``, ``unknown-name``) with its one-line
   message; but when the model had also declined, its decline stands: ``model-declined``, with the query it wrote kept and
   the message saying the query was not run (or failed) and which check refused it.

Refusals are answers (:class:`GraphAnswer` with ``refusal`` set), not exceptions; an
exception from the chat client (network, rate limit) propagates, with no answer. Nothing
is retried and nothing is written. No scope is taken: the query reads the whole
database, so this is for single-tenant or trusted callers (docs/security.md). The rows
are never turned into prose.
"""

from __future__ import annotations

import time

from graphrag_orm.chat.base import ChatClient, ChatReply
from graphrag_orm.codes import GraphRefusal, LimitName
from graphrag_orm.errors import QueryRefused
from graphrag_orm.models import LexicalModel
from graphrag_orm.ontology import Ontology
from graphrag_orm.retrieval.question import check_question
from graphrag_orm.store import Store
from graphrag_orm.store.gate import CypherGate
from graphrag_orm.store.sandbox import CypherSandbox, SandboxResult, vector_property_names
from graphrag_orm.text2cypher.options import Text2CypherOptions
from graphrag_orm.text2cypher.prompt import graph_request, parse_graph_reply
from graphrag_orm.text2cypher.schema_text import schema_names, schema_text
from graphrag_orm.text2cypher.values import GraphAnswer, GraphReceipt
from graphrag_orm.tracing import SpanName, SpanRecorder, span
from graphrag_orm.values import Limit

__all__ = ["GraphQuestions"]

#: The longest model reason a refusal's message repeats (it is one line, cut here).
_MAX_REASON_CHARS = 300


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _MAX_REASON_CHARS else line[:_MAX_REASON_CHARS] + "..."


class GraphQuestions:
    """Questions about the graph answered by a model-written, sandboxed read (``rag.graph``).

    ``schema`` is the schema text the model is given, built once from ``model`` and
    ``ontology``. See the module's docstring for the order of the checks. ``gate`` replaces
    the text gate (``CypherGate(max_chars=options.max_query_chars)``): a deployment's own
    subclass may refuse more (an allow-list of labels); the server's plan checks and the
    read transaction stay whatever the gate.
    """

    def __init__(
        self,
        store: Store,
        model: LexicalModel,
        chat: ChatClient,
        options: Text2CypherOptions | None = None,
        ontology: Ontology | None = None,
        *,
        gate: CypherGate | None = None,
    ) -> None:
        self.store = store
        self.model = model
        self.chat = chat
        self.options = options or Text2CypherOptions()
        self.ontology = ontology
        self.schema = schema_text(model, ontology)
        self._sandbox = CypherSandbox(
            gate=gate or CypherGate(max_chars=self.options.max_query_chars),
            # The layout's vector property, the default staging one; every vector index's at each run.
            left_out=vector_property_names(model.layout),
            # A name the database never held is refused unless the schema declares it.
            known_names=schema_names(model, ontology),
        )

    async def ask(self, question: str) -> GraphAnswer:
        """The model's query for ``question`` and its rows, or a refusal with its reason.

        Raises ``QuestionRefused`` (``empty-question``, ``question-too-long``,
        ``invalid-question``) before any call, and whatever the chat client raises.
        """
        with span(SpanName.GRAPH_ASK) as traced:
            options = self.options
            check_question(question, options.max_question_chars)
            began = time.monotonic()
            reply = await self.chat.complete(graph_request(question, self.schema, options.max_output_tokens))
            answer = await self._judged(question, reply, time.monotonic() - began)
            _trace(traced, answer)
            return answer

    async def _judged(self, question: str, reply: ChatReply, chat_seconds: float) -> GraphAnswer:
        """A decline or an unreadable reply refused; a query run through the sandbox."""
        reading = parse_graph_reply(reply.text, truncated=reply.truncated)
        declined = None if reading.declined is None else _one_line(reading.declined)
        if reading.cypher is None and declined is not None:
            message = f"the model says the graph cannot answer: {declined}"
            return _refused(question, None, GraphRefusal.MODEL_DECLINED, message, reply, chat_seconds, 0.0)
        if reading.cypher is None:
            message = f"the model's reply is not the JSON asked for ({reading.problem})"
            return _refused(question, None, GraphRefusal.UNREADABLE_RESPONSE, message, reply, chat_seconds, 0.0)
        return await self._run(question, reading.cypher, declined, reply, chat_seconds)

    async def _run(
        self, question: str, cypher: str, declined: str | None, reply: ChatReply, chat_seconds: float
    ) -> GraphAnswer:
        began = time.monotonic()
        try:
            result = await self._sandbox.run(
                self.store, cypher, limits=self.options.sandbox_limits(), name="text2cypher.query"
            )
        except QueryRefused as refused:
            seconds = time.monotonic() - began
            if declined is not None:
                ran = refused.code in (GraphRefusal.QUERY_TIMEOUT, GraphRefusal.QUERY_FAILED)
                message = (
                    f"the model says the graph cannot answer: {declined}; "
                    f"its query {'failed' if ran else 'was not run'} ({refused.code}: {refused.message})"
                )
                return _refused(question, cypher, GraphRefusal.MODEL_DECLINED, message, reply, chat_seconds, seconds)
            return _refused(question, cypher, GraphRefusal(refused.code), refused.message, reply, chat_seconds, seconds)
        rows = len(result.rows)
        more = " (more were there)" if result.truncated else ""
        return GraphAnswer(
            question=question,
            query=cypher,
            columns=result.keys,
            rows=result.rows,
            refusal=None,
            message=f"the query returned {rows} row{'' if rows == 1 else 's'}{more}",
            limits_reached=self._limits(result),
            receipt=_receipt(reply, chat_seconds, time.monotonic() - began),
        )

    def _limits(self, result: SandboxResult) -> tuple[Limit, ...]:
        options = self.options
        reached: list[Limit] = []
        if result.truncated:
            reached.append(Limit(name=LimitName.GRAPH_QUERY_ROWS, value=options.max_rows))
        if result.lists_cut:
            reached.append(Limit(name=LimitName.GRAPH_QUERY_LIST_ITEMS, value=options.max_list_items))
        if result.texts_cut:
            reached.append(Limit(name=LimitName.GRAPH_QUERY_TEXT, value=options.max_text_chars))
        if result.bytes_cut:
            reached.append(Limit(name=LimitName.GRAPH_QUERY_BYTES, value=options.sandbox_limits().max_bytes))
        return tuple(reached)


def _receipt(reply: ChatReply, chat_seconds: float, query_seconds: float) -> GraphReceipt:
    usage = reply.usage
    return GraphReceipt(
        chat_calls=1,
        input_tokens=usage.input_tokens if usage is not None else None,
        output_tokens=usage.output_tokens if usage is not None else None,
        chat_seconds=round(chat_seconds, 6),
        query_seconds=round(query_seconds, 6),
    )


def _refused(
    question: str,
    cypher: str | None,
    refusal: GraphRefusal,
    message: str,
    reply: ChatReply,
    chat_seconds: float,
    query_seconds: float,
) -> GraphAnswer:
    return GraphAnswer(
        question=question,
        query=cypher,
        refusal=refusal,
        message=message,
        receipt=_receipt(reply, chat_seconds, query_seconds),
    )


def _trace(traced: SpanRecorder, answer: GraphAnswer) -> None:
    """Counts and codes only: never the question, the query or a value."""
    traced.set("rows", len(answer.rows))
    traced.set("calls", answer.receipt.chat_calls)
    if answer.refusal is not None:
        traced.set("reason", answer.refusal.value)
    if answer.limits_reached:
        traced.set("limits", [str(limit.name) for limit in answer.limits_reached])
    if answer.receipt.input_tokens is not None:
        traced.set("input_tokens", answer.receipt.input_tokens)
    if answer.receipt.output_tokens is not None:
        traced.set("output_tokens", answer.receipt.output_tokens)
