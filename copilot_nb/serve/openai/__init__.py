"""The OpenAI API's wire shapes, pure: Chat Completions and Responses requests checked into ours,
our replies and errors in theirs, and the routes that join them to the backend."""
