"""Building a ``GraphRag`` from the environment, for the CLI, the demo and scripts.

Offline by default: ``HashingEmbedder`` (the offline embedding set) and the
``ExtractiveChat`` stand-in, both labelled as stand-ins wherever their output is
shown. A real model is used only when named:

- answers: ``OPENAI_API_KEY`` (or ``OPENAI_BASE_URL``) set; model ``GRAPHRAG_CHAT_MODEL``
  (default ``gpt-4.1-mini``);
- embeddings: ``GRAPHRAG_EMBEDDING_MODEL`` and ``GRAPHRAG_EMBEDDING_DIMENSIONS`` both set
  (the database then needs a chain for that set: ``GRAPHRAG_MIGRATIONS_DIR``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from graphrag_orm.chat import ChatClient
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings import Embedder, EmbeddingSet, HashingEmbedder, Similarity
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.facade import GraphRag
from graphrag_orm.layout import Layout
from graphrag_orm.ontology import Ontology
from graphrag_orm.options import GraphRagOptions

__all__ = ["DEFAULT_CHAT_MODEL", "ModelChoice", "embedding_set_from_env", "graphrag_from_env", "models_from_env"]

DEFAULT_CHAT_MODEL = "gpt-4.1-mini"


@dataclass(frozen=True)
class ModelChoice:
    """Which clients the environment names, and how to label them to a reader."""

    embedding_set: EmbeddingSet
    embedder: Embedder
    chat: ChatClient
    embedder_label: str
    chat_label: str


def embedding_set_from_env(
    model: str | None = None, dimensions: int | None = None, similarity: Similarity = Similarity.COSINE
) -> EmbeddingSet:
    """The set named by the arguments, else by GRAPHRAG_EMBEDDING_MODEL and
    GRAPHRAG_EMBEDDING_DIMENSIONS; neither gives the offline set. Only one of the two, or
    dimensions that are not a number, is ``ConfigurationError("invalid-option")``."""
    model = model or os.environ.get("GRAPHRAG_EMBEDDING_MODEL") or None
    configured = os.environ.get("GRAPHRAG_EMBEDDING_DIMENSIONS")
    if dimensions is None and configured:
        try:
            dimensions = int(configured)
        except ValueError:
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION, f"GRAPHRAG_EMBEDDING_DIMENSIONS must be a number, not {configured!r}"
            ) from None
    if model is None and dimensions is None:
        return OFFLINE_EMBEDDING_SET
    if model is None or dimensions is None:
        raise ConfigurationError(
            ErrorCode.INVALID_OPTION,
            "give both the embedding model and its dimensions (or neither for the offline set)",
        )
    return EmbeddingSet(model=model, dimensions=dimensions, similarity=similarity)


def _real_endpoint() -> bool:
    return bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"))


def models_from_env() -> ModelChoice:
    """The embedder and chat client the environment names (offline stand-ins otherwise)."""
    embedding_set = embedding_set_from_env()
    embedder: Embedder
    if embedding_set is OFFLINE_EMBEDDING_SET:
        embedder = HashingEmbedder(embedding_set.dimensions)
        embedder_label = "HashingEmbedder (offline stand-in: feature hashing, not a semantic model)"
    else:
        if not _real_endpoint():
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION, "a named embedding model needs OPENAI_API_KEY or OPENAI_BASE_URL"
            )
        # Imported here: the openai SDK is loaded only when a real model is named.
        from graphrag_orm.embeddings.openai import OpenAIEmbedder

        embedder = OpenAIEmbedder(embedding_set.model, dimensions=embedding_set.dimensions)
        embedder_label = f"{embedding_set.model} ({embedding_set.dimensions} dimensions)"
    chat: ChatClient
    if _real_endpoint():
        from graphrag_orm.chat.openai import OpenAIChat

        model = os.environ.get("GRAPHRAG_CHAT_MODEL", DEFAULT_CHAT_MODEL)
        chat = OpenAIChat(model)
        chat_label = model
    else:
        from graphrag_orm.chat.extractive import ExtractiveChat

        stand_in = ExtractiveChat()
        chat = stand_in
        chat_label = stand_in.label
    return ModelChoice(embedding_set, embedder, chat, embedder_label, chat_label)


def graphrag_from_env(
    options: GraphRagOptions | None = None, layout: Layout = Layout.DEFAULT, ontology: Ontology | None = None
) -> tuple[GraphRag, ModelChoice]:
    """A ``GraphRag`` wired from the environment (not yet connected) and the labels of its models.

    With ``ontology``, maintenance also removes and checks that ontology's things, facts,
    mentions and quotes, and extraction uses the environment's chat client.
    """
    choice = models_from_env()
    rag = GraphRag(
        embedding_set=choice.embedding_set,
        embedder=choice.embedder,
        chat=choice.chat,
        layout=layout,
        ontology=ontology,
        options=options,
    )
    return rag, choice
