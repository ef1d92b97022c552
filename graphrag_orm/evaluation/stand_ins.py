"""InMemoryRetriever: a stand-in retriever over passages held in memory, for tests and offline trials.

It is not a search index and is labelled as a stand-in in every report
(:attr:`InMemoryRetriever.label`). It ranks its passages by how many *content words*
(as :func:`graphrag_orm.chat.extractive.content_words` counts them) they share with the
question, most first, ties in the order given; a passage sharing none is never
retrieved. It keeps the first ``options.max_items`` and applies no byte budget.

It is also a :class:`~graphrag_orm.evaluation.stored.StoredText`: its passages are its
"stored" text, so the stored-bytes check runs without a database.
:meth:`InMemoryRetriever.from_documents` cuts documents into passages at blank lines,
with exact byte spans (``text == utf8[start_byte:end_byte].decode()``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence

from graphrag_orm.chat.extractive import content_words
from graphrag_orm.codes import LimitName
from graphrag_orm.evaluation.stored import StoredChunk
from graphrag_orm.evidence import Evidence, EvidenceItem
from graphrag_orm.retrieval.options import RetrievalOptions
from graphrag_orm.retrieval.question import check_question
from graphrag_orm.values import Limit

__all__ = ["InMemoryRetriever"]

_PASSAGE = re.compile(r"\S(?:.*?\S)?(?=\s*(?:\n[^\S\n]*\n|\Z))", re.DOTALL)


def _id(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


class InMemoryRetriever:
    """Retrieves from a fixed list of evidence items by shared content words (a stand-in)."""

    is_stand_in = True
    label = "InMemoryRetriever (stand-in: ranks passages by shared words, no index)"

    def __init__(self, items: Sequence[EvidenceItem], options: RetrievalOptions | None = None) -> None:
        self.items = tuple(items)
        self.options = options or RetrievalOptions()
        self._words = [content_words(item.text) for item in self.items]

    @classmethod
    def from_documents(cls, documents: Mapping[str, str], options: RetrievalOptions | None = None) -> InMemoryRetriever:
        """Passages of ``documents`` (name to text), cut at blank lines; ids are hashes of name and span.

        A document's id is the SHA-256 of ``memory:<name>``, its source URI ``memory:<name>``,
        its title the name.
        """
        items: list[EvidenceItem] = []
        for name, text in documents.items():
            uri = f"memory:{name}"
            document_id = _id(uri)
            for match in _PASSAGE.finditer(text):
                start = len(text[: match.start()].encode("utf-8"))
                end = start + len(match.group().encode("utf-8"))
                items.append(
                    EvidenceItem(
                        chunk_id=_id(document_id, str(start), str(end)),
                        document_id=document_id,
                        source_uri=uri,
                        title=name,
                        text=match.group(),
                        start_byte=start,
                        end_byte=end,
                        score=0.0,
                    )
                )
        return cls(items, options)

    async def retrieve(self, question: str, options: RetrievalOptions | None = None) -> Evidence:
        """The passages sharing content words with ``question``, most first, at most ``max_items``."""
        options = options or self.options
        check_question(question, options.max_question_chars)
        asked = content_words(question)
        scored = [(len(asked & words), index) for index, words in enumerate(self._words)]
        ranked = sorted((pair for pair in scored if pair[0]), key=lambda pair: (-pair[0], pair[1]))
        items = tuple(
            self.items[index].model_copy(update={"score": float(score)}) for score, index in ranked[: options.max_items]
        )
        omitted = len(ranked) - len(items)
        cut = (Limit(name=LimitName.MAX_ITEMS, value=options.max_items),) if omitted else ()
        return Evidence(question=question, items=items, omitted_items=omitted, limits_reached=cut)

    async def chunks(self, chunk_ids: Sequence[str]) -> Mapping[str, StoredChunk]:
        """The passages of ``chunk_ids`` as stored chunks (the stored-bytes check's reader)."""
        wanted = set(chunk_ids)
        return {
            item.chunk_id: StoredChunk(item.chunk_id, item.text, item.start_byte, item.end_byte)
            for item in self.items
            if item.chunk_id in wanted
        }
