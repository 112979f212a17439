"""Language models over HTTP: the `Model` protocol and `ChatModel` base, SSE decoding, transport
with retries, OpenAI-compatible Chat Completions, Anthropic Messages, and GitHub Copilot with its
sign-in and token renewal. Nothing here knows about tools, files or Jupyter."""
