"""Anthropic's Messages API: `AnthropicChat` and its pure stream decoder."""
