"""Small MCP servers written with the official SDK, for what the reference servers don't do."""
