"""What an ingestion would do, without writing: load, check unchanged (a read), chunk, count calls and tokens."""

from __future__ import annotations

import math
from collections.abc import Sequence

from graphrag_orm.codes import LimitName
from graphrag_orm.errors import DocumentFailure, GraphRagError
from graphrag_orm.extraction.service import Extractor
from graphrag_orm.ingestion.planning import DocumentPlanner
from graphrag_orm.ingestion.receipts import DocumentPreview, IngestionPreview, PreviewStatus
from graphrag_orm.ingestion.runs import RunCounters
from graphrag_orm.ingestion.states import DocumentStates
from graphrag_orm.loaders import LoaderRegistry
from graphrag_orm.sources import Source
from graphrag_orm.tokens import ByteEstimateCounter, TokenCounter
from graphrag_orm.values import Limit

__all__ = ["Previewer"]


class Previewer:
    """Previews documents with the same loaders, planner and stored states as the ingestion they preview."""

    def __init__(
        self,
        loaders: LoaderRegistry,
        planner: DocumentPlanner,
        states: DocumentStates,
        *,
        fingerprint: str,
        embedding_batch_size: int,
        extractor: Extractor | None,
    ) -> None:
        self.loaders = loaders
        self.planner = planner
        self.states = states
        self.fingerprint = fingerprint
        self.embedding_batch_size = embedding_batch_size
        self.extractor = extractor

    async def preview(
        self, sources: Sequence[Source], limits: list[Limit], token_counter: TokenCounter | None
    ) -> IngestionPreview:
        """The preview of ``sources`` (already bounded; ``limits`` says what bounded them).

        Tokens are counted with ``token_counter`` when one is given, else estimated at
        four UTF-8 bytes per token (``tokens_counted`` says which).
        """
        counter: TokenCounter = token_counter or ByteEstimateCounter()
        tally = RunCounters()
        previews = [await self._document(source, counter, tally) for source in sources]
        if tally.too_many_chunks:
            limits.append(Limit(name=LimitName.MAX_CHUNKS_PER_DOCUMENT, value=self.planner.chunk_bound))
        over_window = sum(p.chunks_over_window for p in previews)
        if over_window and self.planner.embedder_window is not None:
            limits.append(Limit(name=LimitName.EMBEDDER_WINDOW, value=self.planner.embedder_window))
        return IngestionPreview(
            documents=tuple(previews),
            chunks=sum(p.chunks for p in previews),
            embedding_calls=sum(p.embedding_calls for p in previews),
            extraction_calls=sum(p.extraction_calls for p in previews),
            input_tokens=sum(p.input_tokens for p in previews),
            tokens_counted=token_counter is not None,
            limits_reached=tuple(limits),
            chunks_over_window=over_window,
        )

    async def _document(self, source: Source, counter: TokenCounter, tally: RunCounters) -> DocumentPreview:
        document_id = source.document_id
        try:
            loaded = await self.loaders.load(source)
        except GraphRagError as error:
            return DocumentPreview(
                document_id=document_id,
                source_uri=source.source_uri,
                status=PreviewStatus.FAILED,
                error_code=error.code,
            )
        state = await self.states.stored(source, loaded, self.fingerprint)
        if state == "unchanged":
            return DocumentPreview(
                document_id=document_id, source_uri=source.source_uri, status=PreviewStatus.UNCHANGED
            )
        try:
            plan = self.planner.plan(loaded, tally)
        except DocumentFailure as error:
            return DocumentPreview(
                document_id=document_id,
                source_uri=source.source_uri,
                status=PreviewStatus.FAILED,
                error_code=error.code,
            )
        texts = plan.texts(loaded.utf8)
        tokens = sum(counter.count(text) for text in texts)
        extraction_calls = 0
        if self.extractor is not None:
            # One call per chunk; the chat format adds 4 tokens per message and 3 per
            # request (the schema and any repair ask are not counted).
            extraction_calls = len(texts)
            instructions = counter.count(self.extractor.request("").messages[0].content)
            tokens += sum(instructions + counter.count(f"Passage:\n{text}") + 2 * 4 + 3 for text in texts)
        return DocumentPreview(
            document_id=document_id,
            source_uri=source.source_uri,
            status=PreviewStatus.CHANGED if state == "changed" else PreviewStatus.NEW,
            chunks=len(texts),
            embedding_calls=math.ceil(len(texts) / self.embedding_batch_size),
            extraction_calls=extraction_calls,
            input_tokens=tokens,
            chunks_over_window=await self.planner.over_window(texts),
        )
