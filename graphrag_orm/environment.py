"""Which models a process uses, read from the environment, in four modes that never spend by accident.

The CLI, the samples and scripts build their ``GraphRag`` here (:func:`graphrag_from_env`).
``GRAPHRAG_MODEL_MODE`` says which models may run:

- ``offline`` (the default): the ``ExtractiveChat`` stand-in answers; the local model
  embeds (``all-MiniLM-L6-v2-int8``, 384 dimensions) when the ``local`` extra is
  installed, with no variable set, else the ``HashingEmbedder`` stand-in (the offline
  embedding set), whose label says the extra is missing. ``GRAPHRAG_EMBEDDING_MODEL``
  names another local model, or ``hashing`` for the stand-in even with the extra
  installed. Nothing is sent anywhere: ``OPENAI_API_KEY`` being set changes nothing.
- ``live``: the provider ``GRAPHRAG_PROVIDER`` names. ``openai`` needs
  ``OPENAI_API_KEY`` (``OPENAI_BASE_URL`` optional); ``openai-compatible`` needs
  ``OPENAI_BASE_URL`` (the key optional). Answers from ``GRAPHRAG_CHAT_MODEL`` (default
  ``gpt-4.1-mini``); embeddings from the provider only when ``GRAPHRAG_EMBEDDING_MODEL``
  and ``GRAPHRAG_EMBEDDING_DIMENSIONS`` name a model (the database then needs a chain for
  that set), else as offline.
- ``replay``: recordings only. ``GRAPHRAG_RECORDINGS`` is a recording file (the
  :class:`~graphrag_orm.chat.Recorder` format), or a folder holding ``recordings.json``,
  and must exist. Chat replies, and the vectors of a provider's embedding model when one
  is named, come from it; a request with no recording raises ``RecordingMissing``
  (``recording-missing``). No provider is needed and no request is sent.
- ``record``: replays what is recorded and sends what is missing to the live provider
  (its variables as for ``live``), recording each reply into ``GRAPHRAG_RECORDINGS``
  (created if absent). At most ``GRAPHRAG_MAX_CALLS`` calls are sent per process (40 by
  default, 1 to 1,000); the call over the budget raises ``CallBudgetExceeded``
  (``call-budget-exceeded``, limit ``MaxCalls``) and is not sent.

How the chat endpoint takes a schema, an output limit and a timeout, and the lanes and
output limits to use (local servers write slowly, one request at a time), come from the
variables :mod:`graphrag_orm.model_env` lists, with defaults by provider.

Every refusal happens before a client is built, as one line: an unknown mode or
provider is ``unknown-model-mode`` / ``unknown-provider`` naming the allowed values;
a mode or provider without a variable it needs is ``model-setting-missing``, printing
the settings read with any key shown as ``***`` and an endpoint without its user
information or query. Values a user typed into a mode or provider are never echoed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from urllib.parse import urlsplit

from graphrag_orm.call_budget import BudgetedChat, BudgetedEmbedder, CallBudget
from graphrag_orm.chat import ChatClient, Recorder
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings import Embedder, EmbeddingSet, HashingEmbedder, Similarity
from graphrag_orm.embeddings.local import DEFAULT_MODEL as DEFAULT_LOCAL_MODEL
from graphrag_orm.embeddings.local import INSTALL_HINT, LOCAL_MODELS, LocalEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import ConfigurationError, ModelModeError
from graphrag_orm.facade import GraphRag
from graphrag_orm.layout import Layout
from graphrag_orm.model_env import ModelLoad, model_load
from graphrag_orm.ontology import Ontology
from graphrag_orm.options import GraphRagOptions
from graphrag_orm.tenancy import tenancy_from_env, tenant_from_env

__all__ = [
    "DEFAULT_CHAT_MODEL",
    "DEFAULT_MAX_CALLS",
    "HASHING_MODEL_NAME",
    "MAX_CALLS_BOUND",
    "RECORDING_FILE",
    "BudgetedChat",
    "BudgetedEmbedder",
    "CallBudget",
    "ModelChoice",
    "ModelMode",
    "ModelSettings",
    "Provider",
    "chat_from_env",
    "embedding_set_from_env",
    "graphrag_from_env",
    "model_settings",
    "models_from_env",
]

DEFAULT_CHAT_MODEL = "gpt-4.1-mini"
DEFAULT_MAX_CALLS = 40
"""Record mode's call budget per process when ``GRAPHRAG_MAX_CALLS`` is not set."""
MAX_CALLS_BOUND = 1000
"""The largest ``GRAPHRAG_MAX_CALLS``: a budget is a bound, not a way to turn bounds off."""
RECORDING_FILE = "recordings.json"
"""The file ``GRAPHRAG_RECORDINGS`` means when it names a folder."""
HASHING_MODEL_NAME = "hashing"
"""The ``GRAPHRAG_EMBEDDING_MODEL`` value that picks the hashing stand-in (the offline set)."""
_HASHING_LABEL = "HashingEmbedder (offline stand-in: feature hashing, not a semantic model)"
_HASHING_FALLBACK_LABEL = (
    f"HashingEmbedder (offline stand-in, not a semantic model: the local model is not installed, {INSTALL_HINT})"
)


class ModelMode(StrEnum):
    """``GRAPHRAG_MODEL_MODE``: which models may run."""

    OFFLINE = "offline"
    LIVE = "live"
    REPLAY = "replay"
    RECORD = "record"


class Provider(StrEnum):
    """``GRAPHRAG_PROVIDER``: the endpoint a live or record run calls."""

    OPENAI = "openai"
    OPENAI_COMPATIBLE = "openai-compatible"


def _endpoint(url: str) -> str:
    """An endpoint as messages show it: scheme, host, port and path; no user information, no query."""
    try:
        parts = urlsplit(url)
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        return "(set, not a URL)"
    return f"{parts.scheme}://{parts.hostname or ''}{port}{parts.path}"


@dataclass(frozen=True)
class ModelSettings:
    """What the environment says about models, checked; :meth:`describe` prints it without the key."""

    mode: ModelMode = ModelMode.OFFLINE
    provider: Provider | None = None
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    chat_model: str = DEFAULT_CHAT_MODEL
    embedding_model: str | None = None
    recordings: Path | None = None
    max_calls: int = DEFAULT_MAX_CALLS
    load: ModelLoad = field(default_factory=lambda: model_load({}, local=False))

    def describe(self) -> str:
        """The settings read, as ``NAME=value`` pairs; any key is ``***``, never its value."""
        pairs = [f"GRAPHRAG_MODEL_MODE={self.mode.value}"]
        if self.mode != ModelMode.OFFLINE:
            pairs.append(f"GRAPHRAG_PROVIDER={self.provider.value if self.provider else '(unset)'}")
            pairs.append(f"OPENAI_API_KEY={'***' if self.api_key else '(unset)'}")
            pairs.append(f"OPENAI_BASE_URL={_endpoint(self.base_url) if self.base_url else '(unset)'}")
            pairs.append(f"GRAPHRAG_CHAT_MODEL={self.chat_model}")
        if self.embedding_model:
            pairs.append(f"GRAPHRAG_EMBEDDING_MODEL={self.embedding_model}")
        if self.mode in (ModelMode.REPLAY, ModelMode.RECORD):
            pairs.append(f"GRAPHRAG_RECORDINGS={self.recordings or '(unset)'}")
        if self.mode == ModelMode.RECORD:
            pairs.append(f"GRAPHRAG_MAX_CALLS={self.max_calls}")
        return ", ".join(pairs)

    def missing(self, needs: str, variable: str) -> ModelModeError:
        return ModelModeError(ErrorCode.MODEL_SETTING_MISSING, f"{needs} needs {variable} (read: {self.describe()})")


def _choice(environ: Mapping[str, str], name: str, allowed: type[StrEnum], code: ErrorCode) -> str | None:
    value = (environ.get(name) or "").strip().lower()
    if value and value not in {member.value for member in allowed}:
        names = ", ".join(member.value for member in allowed)
        raise ModelModeError(code, f"{name} is not one of the allowed values: {names}")
    return value or None


def _max_calls(environ: Mapping[str, str]) -> int:
    configured = (environ.get("GRAPHRAG_MAX_CALLS") or "").strip()
    if not configured:
        return DEFAULT_MAX_CALLS
    if not configured.isdigit() or not 1 <= int(configured) <= MAX_CALLS_BOUND:
        raise ConfigurationError(
            ErrorCode.INVALID_OPTION, f"GRAPHRAG_MAX_CALLS must be a whole number from 1 to {MAX_CALLS_BOUND}"
        )
    return int(configured)


def _recordings(environ: Mapping[str, str]) -> Path | None:
    named = (environ.get("GRAPHRAG_RECORDINGS") or "").strip()
    if not named:
        return None
    path = Path(named).expanduser()
    return path / RECORDING_FILE if path.is_dir() or named.endswith(("/", os.sep)) else path


def model_settings(environ: Mapping[str, str] | None = None) -> ModelSettings:
    """The checked settings of ``environ`` (default ``os.environ``); raises the coded errors above."""
    environ = os.environ if environ is None else environ
    mode = ModelMode(_choice(environ, "GRAPHRAG_MODEL_MODE", ModelMode, ErrorCode.UNKNOWN_MODEL_MODE) or "offline")
    provider = _choice(environ, "GRAPHRAG_PROVIDER", Provider, ErrorCode.UNKNOWN_PROVIDER)
    settings = ModelSettings(
        mode=mode,
        provider=Provider(provider) if provider else None,
        api_key=environ.get("OPENAI_API_KEY") or None,
        base_url=(environ.get("OPENAI_BASE_URL") or "").strip() or None,
        chat_model=(environ.get("GRAPHRAG_CHAT_MODEL") or "").strip() or DEFAULT_CHAT_MODEL,
        embedding_model=(environ.get("GRAPHRAG_EMBEDDING_MODEL") or "").strip() or None,
        recordings=_recordings(environ),
        max_calls=_max_calls(environ) if mode == ModelMode.RECORD else DEFAULT_MAX_CALLS,
        load=model_load(
            environ, local=provider == Provider.OPENAI_COMPATIBLE and mode in (ModelMode.LIVE, ModelMode.RECORD)
        ),
    )
    if mode in (ModelMode.REPLAY, ModelMode.RECORD) and settings.recordings is None:
        raise settings.missing(f"GRAPHRAG_MODEL_MODE={mode.value}", "GRAPHRAG_RECORDINGS (a file, or a folder)")
    if mode == ModelMode.REPLAY and settings.recordings is not None and not settings.recordings.is_file():
        raise settings.missing("GRAPHRAG_MODEL_MODE=replay", "an existing recording at GRAPHRAG_RECORDINGS")
    if mode in (ModelMode.LIVE, ModelMode.RECORD):
        if settings.provider is None:
            raise settings.missing(f"GRAPHRAG_MODEL_MODE={mode.value}", "GRAPHRAG_PROVIDER (openai, openai-compatible)")
        if settings.provider == Provider.OPENAI and not settings.api_key:
            raise settings.missing("GRAPHRAG_PROVIDER=openai", "OPENAI_API_KEY")
        if settings.provider == Provider.OPENAI_COMPATIBLE and not settings.base_url:
            raise settings.missing("GRAPHRAG_PROVIDER=openai-compatible", "OPENAI_BASE_URL")
    return settings


@dataclass(frozen=True)
class ModelChoice:
    """Which clients the environment names, and how to label them to a reader."""

    embedding_set: EmbeddingSet
    embedder: Embedder
    chat: ChatClient
    embedder_label: str
    chat_label: str
    mode: ModelMode = ModelMode.OFFLINE
    recorder: Recorder | None = None
    budget: CallBudget | None = None


def embedding_set_from_env(
    model: str | None = None,
    dimensions: int | None = None,
    similarity: Similarity = Similarity.COSINE,
    environ: Mapping[str, str] | None = None,
) -> EmbeddingSet:
    """The set named by the arguments, else by GRAPHRAG_EMBEDDING_MODEL and
    GRAPHRAG_EMBEDDING_DIMENSIONS. Neither gives the default local model's set when the
    ``local`` extra is installed (its files fetched on first use), else the offline set; ``hashing`` (HASHING_MODEL_NAME)
    gives the offline set. A local model's name alone gives its set. Only one of the two
    otherwise, or dimensions that are not a number, is ``ConfigurationError("invalid-option")``."""
    environ = os.environ if environ is None else environ
    model = model or (environ.get("GRAPHRAG_EMBEDDING_MODEL") or "").strip() or None
    if model is not None and model.lower() == HASHING_MODEL_NAME:
        return OFFLINE_EMBEDDING_SET
    configured = environ.get("GRAPHRAG_EMBEDDING_DIMENSIONS")
    if dimensions is None and configured:
        try:
            dimensions = int(configured)
        except ValueError:
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION, f"GRAPHRAG_EMBEDDING_DIMENSIONS must be a number, not {configured!r}"
            ) from None
    if model in LOCAL_MODELS and dimensions is None:
        dimensions = LOCAL_MODELS[model].dimensions
    if model is None and dimensions is None:
        if LocalEmbedder.installed(DEFAULT_LOCAL_MODEL):
            return EmbeddingSet(model=DEFAULT_LOCAL_MODEL, dimensions=LOCAL_MODELS[DEFAULT_LOCAL_MODEL].dimensions)
        return OFFLINE_EMBEDDING_SET
    if model is None or dimensions is None:
        raise ConfigurationError(
            ErrorCode.INVALID_OPTION,
            "give both the embedding model and its dimensions (or neither for the offline set)",
        )
    return EmbeddingSet(model=model, dimensions=dimensions, similarity=similarity)


def _provider_chat(settings: ModelSettings) -> ChatClient:
    # Imported here: the openai SDK is loaded only when a provider is called.
    from graphrag_orm.chat.openai import OpenAIChat

    return OpenAIChat(
        settings.chat_model, api_key=settings.api_key, base_url=settings.base_url, endpoint=settings.load.endpoint
    )


def _provider_embedder(settings: ModelSettings, embedding_set: EmbeddingSet) -> Embedder:
    from graphrag_orm.embeddings.openai import OpenAIEmbedder

    return OpenAIEmbedder(
        embedding_set.model, dimensions=embedding_set.dimensions, api_key=settings.api_key, base_url=settings.base_url
    )


def _embedder(
    settings: ModelSettings, environ: Mapping[str, str], recorder: Recorder | None, budget: CallBudget | None
) -> tuple[EmbeddingSet, Embedder, str]:
    embedding_set = embedding_set_from_env(environ=environ)
    if embedding_set is OFFLINE_EMBEDDING_SET:
        chosen = (environ.get("GRAPHRAG_EMBEDDING_MODEL") or "").strip().lower() == HASHING_MODEL_NAME
        label = _HASHING_LABEL if chosen else _HASHING_FALLBACK_LABEL
        return embedding_set, HashingEmbedder(embedding_set.dimensions), label
    if embedding_set.model in LOCAL_MODELS:
        from graphrag_orm.embeddings import LocalEmbedder

        local = LocalEmbedder(embedding_set.model)
        return local.embedding_set(), local, f"{local.label} (local model, offline)"
    named = f"{embedding_set.model} ({embedding_set.dimensions} dimensions"
    if settings.mode == ModelMode.OFFLINE:
        raise settings.missing(
            f"GRAPHRAG_EMBEDDING_MODEL={embedding_set.model} (a provider's model)",
            f"GRAPHRAG_MODEL_MODE=live, replay or record (offline embeds with the stand-in or {', '.join(LOCAL_MODELS)})",
        )
    if settings.mode == ModelMode.LIVE:
        return embedding_set, _provider_embedder(settings, embedding_set), f"{named}, live)"
    assert recorder is not None
    if settings.mode == ModelMode.REPLAY:
        return embedding_set, recorder.embedder(None, embedding_set.dimensions), f"{named}, replayed)"
    assert budget is not None
    inner = BudgetedEmbedder(_provider_embedder(settings, embedding_set), budget)
    return embedding_set, recorder.embedder(inner, embedding_set.dimensions), f"{named}, recorded)"


def _chat(settings: ModelSettings, recorder: Recorder | None, budget: CallBudget | None) -> tuple[ChatClient, str]:
    if settings.mode == ModelMode.OFFLINE:
        from graphrag_orm.chat.extractive import ExtractiveChat

        stand_in = ExtractiveChat()
        return stand_in, stand_in.label
    provider = settings.provider.value if settings.provider else ""
    if settings.mode == ModelMode.LIVE:
        return _provider_chat(settings), f"{settings.chat_model} (live, {provider})"
    assert recorder is not None
    if settings.mode == ModelMode.REPLAY:
        return recorder.chat(None), f"replayed from {recorder.path} (recordings only, no model calls)"
    assert budget is not None
    label = f"{settings.chat_model} (recorded into {recorder.path}: at most {budget.limit} new calls, {provider})"
    return recorder.chat(BudgetedChat(_provider_chat(settings), budget)), label


def models_from_env(environ: Mapping[str, str] | None = None) -> ModelChoice:
    """The embedder and chat client ``GRAPHRAG_MODEL_MODE`` allows (offline stand-ins by default).

    ``environ`` defaults to ``os.environ``.
    """
    environ = os.environ if environ is None else environ
    settings = model_settings(environ)
    recorder, budget = _recording(settings)
    embedding_set, embedder, embedder_label = _embedder(settings, environ, recorder, budget)
    chat, chat_label = _chat(settings, recorder, budget)
    return ModelChoice(embedding_set, embedder, chat, embedder_label, chat_label, settings.mode, recorder, budget)


def chat_from_env(environ: Mapping[str, str] | None = None) -> tuple[ChatClient, str, ModelMode]:
    """The chat client alone, its label and the mode, for a sample that embeds on its own.

    Offline it is the ``ExtractiveChat`` stand-in: a sample with replies of its own
    checks the mode and uses them instead.
    """
    settings = model_settings(environ)
    chat, label = _chat(settings, *_recording(settings))
    return chat, label, settings.mode


def _recording(settings: ModelSettings) -> tuple[Recorder | None, CallBudget | None]:
    if settings.mode not in (ModelMode.REPLAY, ModelMode.RECORD):
        return None, None
    assert settings.recordings is not None
    if settings.mode == ModelMode.REPLAY:
        return Recorder(settings.recordings, "replay"), None
    return Recorder(settings.recordings, "record"), CallBudget(settings.max_calls)


def graphrag_from_env(
    options: GraphRagOptions | None = None, layout: Layout = Layout.DEFAULT, ontology: Ontology | None = None
) -> tuple[GraphRag, ModelChoice]:
    """A ``GraphRag`` wired from the environment (not yet connected) and the labels of its models.

    With ``ontology``, maintenance also removes and checks that ontology's things, facts,
    mentions and quotes, and extraction uses the environment's chat client. The lanes
    and output limits the environment names (:mod:`graphrag_orm.model_env`) fill the
    fields ``options`` leaves unset. ``GRAPHRAG_TENANCY=required`` makes the layout
    tenanted and ``GRAPHRAG_TENANT`` binds the object to a tenant (docs/tenancy.md); a
    value of either that is not one is ``invalid-layout`` / ``invalid-tenant``.
    """
    if tenancy_from_env() == "required":
        layout = layout.replace(tenancy="required")
    tenant = tenant_from_env()
    settings = model_settings()
    options = settings.load.apply(options)
    choice = models_from_env()
    # A reranker only when GRAPHRAG_RERANK_URL names one (graphrag_orm.retrieval.rerank).
    from graphrag_orm.retrieval.rerank import RerankStage, with_stage

    rerank = RerankStage.from_env()
    if rerank is not None:
        options = options.model_copy(update={"retrieval": with_stage(options.retrieval, rerank.name)})
    rag = GraphRag(
        embedding_set=choice.embedding_set,
        embedder=choice.embedder,
        chat=choice.chat,
        layout=layout,
        ontology=ontology,
        options=options,
        stages=(rerank,) if rerank is not None else (),
        tenant=tenant,
    )
    return rag, choice
