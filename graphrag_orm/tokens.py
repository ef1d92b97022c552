"""Token counters: how the chunker measures a chunk against ``max_tokens``.

Byte budgets are exact and always enforced; a token budget applies only when the
application supplies a counter, because a tokenizer is specific to a model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "TOKENIZER_UNAVAILABLE",
    "ByteEstimateCounter",
    "TiktokenCounter",
    "TokenCounter",
    "counter_identity",
]

TOKENIZER_UNAVAILABLE = ErrorCode.TOKENIZER_UNAVAILABLE
"""The ``ConfigurationError`` code when a tokenizer's data cannot be loaded."""


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a text. Must be deterministic: the same text, the same count.

    A counter may also have an ``identity`` string (such as ``"tiktoken:o200k_base"``);
    the chunker's fingerprint includes it, so changing the tokenizer changes chunk ids.
    Without one, the class's qualified name stands in.
    """

    def count(self, text: str) -> int: ...


def counter_identity(counter: TokenCounter) -> str:
    """The counter's ``identity`` attribute, or its class's module and qualified name."""
    identity = getattr(counter, "identity", None)
    if isinstance(identity, str) and identity:
        return identity
    kind = type(counter)
    return f"{kind.__module__}.{kind.__qualname__}"


class TiktokenCounter:
    """Counts tokens with a tiktoken encoding (default ``o200k_base``, the GPT-4o family).

    The encoding is loaded when the counter is built. tiktoken downloads an
    encoding's data file the first time and caches it (``TIKTOKEN_CACHE_DIR``, else a
    folder in the temporary directory); offline, with no cached copy, construction
    raises ``ConfigurationError("tokenizer-unavailable")`` rather than failing later
    mid-ingestion. An unknown encoding name raises ``ConfigurationError("invalid-option")``.
    A ready ``tiktoken.Encoding`` (for example one built from a local file) may be
    passed instead of a name. Special-token text such as ``<|endoftext|>`` is counted as
    ordinary text, never refused.
    """

    def __init__(self, encoding: str | tiktoken.Encoding = "o200k_base") -> None:
        try:
            import tiktoken
        except ImportError:  # a core dependency, but a trimmed install may lack it
            raise ConfigurationError(TOKENIZER_UNAVAILABLE, "tiktoken is not installed") from None
        if isinstance(encoding, tiktoken.Encoding):
            self._encoding = encoding
        else:
            if encoding not in tiktoken.list_encoding_names():
                known = ", ".join(sorted(tiktoken.list_encoding_names()))
                raise ConfigurationError(
                    ErrorCode.INVALID_OPTION, f"unknown tiktoken encoding {encoding!r} (known: {known})"
                )
            try:
                self._encoding = tiktoken.get_encoding(encoding)
            except Exception as error:  # requests, OS and hash errors alike mean "no data"
                raise ConfigurationError(
                    TOKENIZER_UNAVAILABLE,
                    f"the tiktoken encoding {encoding!r} could not be loaded "
                    f"({type(error).__name__}: {error}); "
                    "offline, put its cached file in TIKTOKEN_CACHE_DIR, pass a tiktoken.Encoding, "
                    "or use no token budget",
                ) from None
        self.identity = f"tiktoken:{self._encoding.name}"

    def count(self, text: str) -> int:
        """The number of tokens of ``text``."""
        return len(self._encoding.encode_ordinary(text))


class ByteEstimateCounter:
    """An estimate for previews: 4 UTF-8 bytes per token, rounded up (``""`` is 0).

    Cheap and model-independent; never use it where an exact model budget matters.
    """

    identity = "estimate:utf8-bytes/4"

    def count(self, text: str) -> int:
        """``ceil(len(text.encode("utf-8")) / 4)``."""
        return -(-len(text.encode("utf-8")) // 4)
