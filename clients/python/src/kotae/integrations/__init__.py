"""Kotae's search as a retriever of LangChain (kotae.integrations.langchain), LlamaIndex
(kotae.integrations.llamaindex) and Haystack (kotae.integrations.haystack). Each module imports its
framework, so import only the one whose extra is installed."""
