"""Chat clients: a real one for OpenAI-compatible endpoints, stand-ins, and recordings.

``OpenAIChat`` never retries on its own; ``ScriptedChat`` answers from a script
(tests); ``Recorder`` records real calls once and replays them at zero calls.
"""

from graphrag_orm.chat.base import ChatChunk, ChatClient, ChatMessage, ChatReply, ChatRequest, ChatUsage
from graphrag_orm.chat.extractive import ExtractiveChat
from graphrag_orm.chat.openai import OpenAIChat
from graphrag_orm.chat.recorder import (
    Recorder,
    RecordingChat,
    RecordingEmbedder,
    RecordingMissing,
    RecordingRefused,
)
from graphrag_orm.chat.scripted import ScriptedChat, ScriptMissing

__all__ = [
    "ChatChunk",
    "ChatClient",
    "ChatMessage",
    "ChatReply",
    "ChatRequest",
    "ChatUsage",
    "ExtractiveChat",
    "OpenAIChat",
    "Recorder",
    "RecordingChat",
    "RecordingEmbedder",
    "RecordingMissing",
    "RecordingRefused",
    "ScriptMissing",
    "ScriptedChat",
]
