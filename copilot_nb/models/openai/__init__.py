"""OpenAI's wires: Chat Completions (`OpenAIChat`, and `OllamaChat` on Ollama's `/v1`) and the
Responses API (`OpenAIResponses`), each a client, a pure request builder and a pure stream decoder."""
