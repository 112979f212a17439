"""`%copilot <command>`: the line magic's subcommands (dispatch, sign-in and models, MCP servers,
the proxy, cassettes, the context)."""
