"""An agent's turn with tools (an OpenAI chat completion offered ``tools``), recorded and replayed.

The toolkit's own requests are :class:`~graphrag_orm.chat.ChatRequest`\\ s, which carry no
tools: an agent's turn is the application's request, sent with the openai SDK. This keeps
such turns in the same :class:`~graphrag_orm.chat.Recorder` file as the toolkit's replies,
as entries of kind ``agent-turn`` keyed by the SHA-256 of the canonical JSON of the
messages, tools and tool choice; each keeps the reply's text, its tool calls (id, name,
arguments as sent), finish reason, model and date, and is checked for secrets like any
entry. Replay never calls a model; a turn with no entry raises ``RecordingMissing``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from openai import AsyncOpenAI

from graphrag_orm.chat import Recorder
from graphrag_orm.chat.recorder import HINT_LENGTH

AGENT_TURN = "agent-turn"


@dataclass(frozen=True)
class AgentCall:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class AgentTurn:
    text: str
    calls: tuple[AgentCall, ...]
    finish_reason: str | None
    model: str | None


def turn_hash(messages: list[dict[str, Any]], tools: list[dict[str, Any]], tool_choice: Any) -> str:
    canonical = json.dumps(
        {"kind": AGENT_TURN, "messages": messages, "tools": tools, "toolChoice": tool_choice},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
    )
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


async def agent_turn(
    recorder: Recorder,
    sdk: AsyncOpenAI | None,
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    *,
    tool_choice: Any = "auto",
    max_tokens: int = 256,
) -> AgentTurn:
    """The recorded turn; in record mode ``sdk``'s reply, recorded first."""
    key = turn_hash(messages, tools, tool_choice)
    entry = recorder.lookup(key, AGENT_TURN)
    if entry is None:
        assert sdk is not None, "record mode needs a client"
        recorder.model_calls += 1
        completion = await sdk.chat.completions.create(
            model=model,
            messages=messages,  # type: ignore[arg-type]
            tools=tools,  # type: ignore[arg-type]
            tool_choice=tool_choice,
            max_tokens=max_tokens,
            temperature=0.0,
        )
        choice = completion.choices[0]
        calls = [
            {"id": call.id, "name": call.function.name, "arguments": call.function.arguments}
            for call in choice.message.tool_calls or []
            if call.type == "function"
        ]
        hint = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        entry = {
            "request": key,
            "kind": AGENT_TURN,
            "hint": " ".join(hint.split())[:HINT_LENGTH],
            "text": choice.message.content or "",
            "toolCalls": calls,
            "finishReason": choice.finish_reason,
            "model": completion.model or model,
            "date": Recorder.today(),
        }
        recorder.store(entry, hint_source=hint)
    return AgentTurn(
        text=entry["text"],
        calls=tuple(AgentCall(c["id"], c["name"], c["arguments"]) for c in entry["toolCalls"]),
        finish_reason=entry.get("finishReason"),
        model=entry.get("model"),
    )
