"""What answers return: the answer, its receipt, and the updates of a streamed answer.

An :class:`Answer` is either ``Answered`` (text with citations, each located in the
stored text) or ``InsufficientEvidence`` (a refusal with a reason and no text). The
service only ever builds answers that hold to this; the type itself does not refuse
an inconsistent one, so that an export can be read back and
:meth:`~graphrag_orm.answers.export.AnswerExport.check` can say what is wrong with it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field

from graphrag_orm.citations import Citation
from graphrag_orm.codes import RefusalReason
from graphrag_orm.evidence import Evidence
from graphrag_orm.values import Value

__all__ = ["Answer", "AnswerReceipt", "AnswerUpdate", "Completed", "Delta", "Disposition", "Retrieved"]


class Disposition(StrEnum):
    """Whether the question was answered with checked citations, or refused."""

    ANSWERED = "Answered"
    INSUFFICIENT_EVIDENCE = "InsufficientEvidence"


class AnswerReceipt(Value):
    """What one answer cost.

    ``chat_calls`` counts every chat call, the follow-up rewrite included (0 when the
    answer was refused for ``no-evidence``). ``input_tokens`` and ``output_tokens``
    are the sums over those calls when *every* call reported them, else ``None``.
    ``retrieval_seconds`` covers the rewrite and retrieval, ``answer_seconds`` the
    answer call and the citation checks (wall-clock, rounded to microseconds); for a
    stream, that includes the time its reader spent between deltas. ``repairs`` is 1
    when a reply's citations did not verify and the model was asked once more (that
    call is counted in ``chat_calls`` too), else 0.
    """

    chat_calls: int = Field(ge=0)
    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    retrieval_seconds: float = Field(ge=0.0)
    answer_seconds: float = Field(ge=0.0)
    repairs: int = Field(default=0, ge=0, le=1)


class Answer(Value):
    """An answer, or a refusal, with the evidence it stands on and its receipt.

    ``Answered``: ``text`` is the model's answer, trimmed; ``citations`` are located
    quotes holding the *stored* text at their byte spans (never the model's copy),
    at least one; ``reason`` is ``None``.
    ``InsufficientEvidence``: ``reason`` is a :class:`~graphrag_orm.codes.RefusalReason`
    value, ``text`` is ``None`` and ``citations`` is empty.
    """

    disposition: Disposition
    text: str | None = None
    citations: tuple[Citation, ...] = ()
    reason: RefusalReason | None = None
    evidence: Evidence
    receipt: AnswerReceipt

    @property
    def answered(self) -> bool:
        """Whether the disposition is ``Answered``."""
        return self.disposition == Disposition.ANSWERED


class Retrieved(Value):
    """First update of a stream, once: the evidence the answer will stand on."""

    kind: Literal["retrieved"] = "retrieved"
    evidence: Evidence


class Delta(Value):
    """The next piece of the answer text as it arrives; provisional, nothing checked yet.

    The pieces joined are the reply's ``answer`` string before trimming. A piece
    never ends inside an escape sequence or between the halves of a surrogate pair.
    """

    kind: Literal["delta"] = "delta"
    text: str
    provisional: bool = True


class Completed(Value):
    """Last update, once: the same answer ``answer()`` returns for the same reply.

    ``withdraws`` is true when deltas were sent and the answer is a refusal: the
    provisional text must be taken back. An ``Answered`` completion's ``text``
    replaces the deltas.
    """

    kind: Literal["completed"] = "completed"
    answer: Answer
    withdraws: bool


AnswerUpdate = Annotated[Retrieved | Delta | Completed, Field(discriminator="kind")]
"""One update of :meth:`AnswersService.stream`: ``Retrieved``, then ``Delta``\\ s, then ``Completed``."""
