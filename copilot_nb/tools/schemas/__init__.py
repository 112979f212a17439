"""A tool's JSON schema: made from a typed function, checked, validated safely, and the
arguments of a call read against it."""
