"""The chunker's options: a byte budget, an optional token budget and the overlap, refused outside their bounds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, ValidationError, field_validator

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.values import Value

__all__ = ["MAX_TOKENS_BOUNDS", "MAX_UTF8_BYTES_BOUNDS", "OVERLAP_PARAGRAPHS_BOUNDS", "ChunkerOptions"]


MAX_UTF8_BYTES_BOUNDS = (64, 16_384)
OVERLAP_PARAGRAPHS_BOUNDS = (0, 4)
MAX_TOKENS_BOUNDS = (1, 1_000_000)


def _invalid_option(name: str, bounds: tuple[int, int], value: object) -> ConfigurationError:
    low, high = bounds
    return ConfigurationError(ErrorCode.INVALID_OPTION, f"{name} must be from {low:,} to {high:,}, not {value!r}")


class ChunkerOptions(Value):
    """The chunker's budget and overlap; refused outside their bounds.

    - ``max_utf8_bytes``: 64 to 16,384 (default 2,048); exact and always enforced.
    - ``max_tokens``: None (default) or 1 to 1,000,000; enforced only when the chunker
      has a token counter.
    - ``overlap_paragraphs``: 0 to 4 (default 1) whole paragraphs repeated at the
      start of the next chunk when the budget allows (see the module's rule 5).

    Building it with out-of-range or non-integer values raises
    ``ConfigurationError("invalid-option")`` naming the option and its bounds
    (``model_validate`` raises pydantic's ``ValidationError`` wrapping the same message).
    """

    max_utf8_bytes: int = Field(default=2_048, strict=True)
    max_tokens: int | None = Field(default=None, strict=True)
    overlap_paragraphs: int = Field(default=1, strict=True)

    if TYPE_CHECKING:
        # What callers see: keyword arguments with their types and defaults.
        def __init__(
            self, *, max_utf8_bytes: int = 2_048, max_tokens: int | None = None, overlap_paragraphs: int = 1
        ) -> None: ...

    else:

        def __init__(self, **data: Any) -> None:
            # pydantic reports a validator's error inside a ValidationError; the
            # toolkit's contract is a ConfigurationError, so unwrap it here (pydantic
            # also calls this for model_validate and JSON).
            try:
                super().__init__(**data)
            except ValidationError as error:
                raise _configuration_error(error) from None

    @field_validator("max_utf8_bytes")
    @classmethod
    def _check_bytes(cls, value: int) -> int:
        if not MAX_UTF8_BYTES_BOUNDS[0] <= value <= MAX_UTF8_BYTES_BOUNDS[1]:
            raise _invalid_option("max_utf8_bytes", MAX_UTF8_BYTES_BOUNDS, value)
        return value

    @field_validator("max_tokens")
    @classmethod
    def _check_tokens(cls, value: int | None) -> int | None:
        if value is not None and not MAX_TOKENS_BOUNDS[0] <= value <= MAX_TOKENS_BOUNDS[1]:
            raise _invalid_option("max_tokens", MAX_TOKENS_BOUNDS, value)
        return value

    @field_validator("overlap_paragraphs")
    @classmethod
    def _check_overlap(cls, value: int) -> int:
        if not OVERLAP_PARAGRAPHS_BOUNDS[0] <= value <= OVERLAP_PARAGRAPHS_BOUNDS[1]:
            raise _invalid_option("overlap_paragraphs", OVERLAP_PARAGRAPHS_BOUNDS, value)
        return value


def _configuration_error(error: ValidationError) -> ConfigurationError:
    for detail in error.errors():
        original = detail.get("ctx", {}).get("error")
        if isinstance(original, ConfigurationError):
            return original
    detail = error.errors()[0]
    name = ".".join(str(part) for part in detail["loc"]) or "options"
    return ConfigurationError(ErrorCode.INVALID_OPTION, f"{name}: {detail['msg']}")
