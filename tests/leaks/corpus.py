"""The leak suite's corpus, and what counts as a leak of the other tenant.

Two tenants hold near-identical documents: the same source URIs, titles and structure,
each with a secret phrase and a distinctive term of its own; the other tenant also holds
one document more (so its counts differ). Every surface is bound to :data:`OWN` and asked
for :data:`OTHER`'s secret; :class:`Leaks` scans what it returned for any byte of the
other tenant's text, ids or counts, and :func:`found_own` holds that the surface did find
its own secret where it should (so no test passes by finding nothing).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from graphrag_orm.chat import ChatChunk, ChatReply, ChatRequest, ExtractiveChat
from graphrag_orm.chat.evidence_block import REWRITE_SCHEMA_NAME, parse_question
from graphrag_orm.sources import Source, Sources, document_id
from graphrag_orm.store import Store

OWN: Final = "acme"
OTHER: Final = "globex"
TENANTS: Final = (OWN, OTHER)
SECRETS: Final = {OWN: "amber-4471", OTHER: "cobalt-9902"}
TERMS: Final = {OWN: "marigold", OTHER: "tamarind"}

#: What a surface bound to OWN is asked: the secret in the words both tenants' documents use,
#: by the other tenant's secret, and by its distinctive term.
VAULT: Final = "What is the vault code?"
BY_SECRET: Final = f"Is the vault code {SECRETS[OTHER]}?"
BY_TERM: Final = f"When is the {TERMS[OTHER]} garden watered, and where is the {TERMS[OTHER]} ledger kept?"
PROBES: Final = (VAULT, BY_SECRET, BY_TERM)

#: How many documents each tenant holds (the other one more: its counts must never show).
DOCUMENTS: Final = {OWN: 2, OTHER: 3}
#: The first characters of an id a table shows (``graphrag-orm documents``).
SHOWN_ID: Final = 12

_ID_LIKE: Final = re.compile(r"[0-9A-Za-z_-]{12,}")


def sources(tenant: str) -> list[Source]:
    """The tenant's documents: the same URIs, titles and structure as the other's, its own secret and term."""
    handbook = (
        "# Borrowing handbook\n\nMembers can borrow twelve items at once.\n\n"
        f"## Vault\n\nThe vault code is {SECRETS[tenant]}. Keep it private.\n\n"
        f"## Garden\n\nThe {TERMS[tenant]} garden is watered on Mondays.\n"
    )
    hours = "# Opening hours\n\nThe library opens at nine and closes at six.\n"
    found = [
        Sources.text("handbook", handbook, media_type="text/markdown").with_metadata(title="Borrowing handbook"),
        Sources.text("hours", hours, media_type="text/markdown").with_metadata(title="Opening hours"),
    ]
    if tenant == OTHER:
        ledger = f"# Ledger\n\nThe {TERMS[tenant]} ledger is kept in the cellar.\n"
        found.append(Sources.text("ledger", ledger, media_type="text/markdown").with_metadata(title="Ledger"))
    assert len(found) == DOCUMENTS[tenant]
    return found


def handbook_id(tenant: str) -> str:
    return document_id("text:handbook", tenant)


async def stored_values(store: Store, tenant: str) -> dict[str, set[str]]:
    """Every string property of the tenant's lexical nodes (documents, sections, chunks, runs), by property."""
    rows = await store.read(
        "MATCH (n) WHERE n.tenant = $owner AND (n:Document OR n:Section OR n:Chunk OR n:IngestionRun) "
        "UNWIND keys(n) AS key WITH key, n[key] AS value WHERE value IS :: STRING "
        "RETURN key, collect(DISTINCT value) AS values",
        {"owner": tenant},
    )
    return {str(row["key"]): {str(value) for value in row["values"]} for row in rows}


@dataclass(frozen=True)
class Leaks:
    """What of OTHER must never be in a response of a surface bound to OWN.

    ``words``: the other tenant's secret (whole and its word), its distinctive term, a
    word only its extra document holds, and its name. ``values``: every string the other
    tenant's nodes store that none of OWN's does (ids, hashes, chunk and section texts,
    URIs and titles of its extra document), and the first :data:`SHOWN_ID` characters of
    each id-like one (a table shows ids cut there).
    """

    words: tuple[str, ...]
    values: tuple[str, ...]
    own_ids: frozenset[str]
    other_ids: frozenset[str]
    other_documents: tuple[str, ...]
    other_texts: tuple[str, ...]

    @classmethod
    async def read(cls, store: Store) -> Leaks:
        own, other = await stored_values(store, OWN), await stored_values(store, OTHER)
        own_all = {value for values in own.values() for value in values}
        other_only = {value for values in other.values() for value in values} - own_all
        prefixes = {
            value[:SHOWN_ID]
            for value in other_only
            if _ID_LIKE.fullmatch(value) and not any(mine.startswith(value[:SHOWN_ID]) for mine in own_all)
        }
        # Not the secret's digits alone: four digits turn up in random ids.
        words = (SECRETS[OTHER], SECRETS[OTHER].split("-")[0], TERMS[OTHER], "cellar", OTHER)
        return cls(
            words=words,
            values=tuple(sorted(other_only | prefixes, key=len, reverse=True)),
            own_ids=frozenset(own.get("id", set())),
            other_ids=frozenset(other.get("id", set())),
            other_documents=tuple(sorted(other.get("documentId", set()))),
            other_texts=tuple(sorted(other.get("text", set()))),
        )

    def found_in(self, output: str, asked: Iterable[str] = ()) -> list[str]:
        """The markers of OTHER in ``output``, once the caller's own input (``asked``) is taken out.

        An input is taken out only when none of OTHER's stored text holds it, so taking it
        out cannot hide a leaked passage.
        """
        for text in sorted(asked, key=len, reverse=True):
            if not text:
                continue
            assert not any(text in stored for stored in self.other_texts), f"the input {text!r} would hide a leak"
            output = output.replace(text, "")
            output = output.replace(json.dumps(text)[1:-1], "")
        lowered = output.lower()
        found = [word for word in self.words if word.lower() in lowered]
        return found + [value for value in self.values if value in output]

    def assert_none(self, output: str | Any, asked: Iterable[str] = ()) -> None:
        """No byte of OTHER's text, ids or counts in ``output`` (a text, or a value serialised as JSON)."""
        text = output if isinstance(output, str) else serialised(output)
        found = self.found_in(text, asked)
        assert found == [], f"{len(found)} markers of {OTHER} in a response bound to {OWN}: {found[:5]}"


def serialised(value: Any) -> str:
    """``value`` as JSON text (a pydantic model by its own dump; anything else by json.dumps)."""
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        value = dump(mode="json", by_alias=True)
    return json.dumps(value, ensure_ascii=False, default=str)


def without_echo(value: Any, keys: Iterable[str] = ("question", "rewrite")) -> Any:
    """``value`` (JSON data) without the keys that echo the caller's own input, at any depth.

    A follow-up's rewrite and the question retrieved are the caller's words (with history
    carried from the other tenant's turn, its words): they are checked apart.
    """
    dropped = frozenset(keys)
    if isinstance(value, Mapping):
        return {key: without_echo(item, dropped) for key, item in value.items() if key not in dropped}
    if isinstance(value, list | tuple):
        return [without_echo(item, dropped) for item in value]
    return value


def found_own(output: str) -> bool:
    """Whether ``output`` holds OWN's secret (it found its own document)."""
    return SECRETS[OWN] in output


class CarryingChat:
    """A chat stand-in whose follow-up rewrite carries the last turn's answer into the question
    (the worst a model may do with history from another tenant's turn); it answers as
    :class:`~graphrag_orm.chat.ExtractiveChat` does, quoting the evidence."""

    is_stand_in = True
    label = "CarryingChat (rewrites by carrying the last answer; answers as ExtractiveChat)"
    model = "carrying-stand-in"

    def __init__(self) -> None:
        self.answering = ExtractiveChat()

    async def complete(self, request: ChatRequest) -> ChatReply:
        if request.schema_name != REWRITE_SCHEMA_NAME:
            return await self.answering.complete(request)
        prompt = request.messages[-1].content
        lines = prompt.split("\n")
        turns = json.loads(lines[lines.index("<conversation>") + 1])
        carried = " ".join(f"{parse_question(prompt)} {turns[-1].get('answer') or ''}".split())
        return ChatReply(text=json.dumps({"question": carried}), finish_reason="stop", model=self.model)

    async def stream(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
        if request.schema_name == REWRITE_SCHEMA_NAME:
            yield ChatChunk(reply=await self.complete(request))
            return
        async for chunk in self.answering.stream(request):
            yield chunk
