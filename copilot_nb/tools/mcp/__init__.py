"""MCP servers as tools: config files, connections through the official SDK (the `mcp` extra,
imported only when a server starts), results, trust pins and the catalogue the session uses."""
