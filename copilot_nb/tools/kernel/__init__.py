"""The kernel tools: the user's live variables described and looked up, the input history, and
code run in the user's namespace."""
