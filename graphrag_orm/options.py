"""All settings in one value: chunking, ingestion, retrieval, retries, extraction, maintenance, answers."""

from __future__ import annotations

from graphrag_orm.answers.options import AnswersOptions
from graphrag_orm.chunking import ChunkerOptions
from graphrag_orm.extraction.options import ExtractionOptions
from graphrag_orm.ingestion.options import IngestionOptions
from graphrag_orm.maintenance.options import MaintenanceOptions
from graphrag_orm.retrieval.options import RetrievalOptions
from graphrag_orm.retry import RetryOptions
from graphrag_orm.values import Options

__all__ = ["GraphRagOptions"]


class GraphRagOptions(Options):
    """The facade's settings; each part keeps its own bounds."""

    chunking: ChunkerOptions = ChunkerOptions()
    ingestion: IngestionOptions = IngestionOptions()
    retrieval: RetrievalOptions = RetrievalOptions()
    retry: RetryOptions = RetryOptions()
    extraction: ExtractionOptions = ExtractionOptions()
    maintenance: MaintenanceOptions = MaintenanceOptions()
    answers: AnswersOptions = AnswersOptions()
