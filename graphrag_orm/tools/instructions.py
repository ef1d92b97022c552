"""What an agent is told about the tools: one text, shared by every surface (OpenAI tools, MCP)."""

from __future__ import annotations

from typing import Final

__all__ = ["INSTRUCTIONS"]

INSTRUCTIONS: Final = (
    "You can consult a collection of stored documents through tools.\n"
    "- For any question about what the documents say, call answer_from_documents with the question. "
    "When it answers, give its answer and list its citations exactly as returned "
    "(document, chunk, byte span, page when given, and the quoted words); "
    "do not reword the quotes and do not add citations of your own.\n"
    "- When answer_from_documents refuses (answered is false), tell the user the documents do not answer "
    "the question, with its reason. Do not answer it from your own knowledge instead.\n"
    "- search_documents returns passages to read, not answers: use them to decide what to ask, "
    "never cite them yourself. Only answer_from_documents gives citations.\n"
    "- find_things and related_facts, when offered, show which things the documents name and "
    "the facts between them, each with the documents that state it; they are leads, not citations.\n"
    "- A result with an error has a code and a message: fix the arguments it names, or say the tool failed."
)
