"""Adapters for LangChain and LlamaIndex (extras ``langchain`` and ``llamaindex``)."""
