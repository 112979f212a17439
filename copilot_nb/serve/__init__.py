"""The proxy: the kernel's model and tools over an OpenAI-compatible HTTP API and MCP."""
