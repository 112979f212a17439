"""The surfaces in Jupyter: the extension entry and magics, `%copilot` commands, the cell's live
transcript, approval prompts, reports, GitHub sign-in, and the chat panel. They consume the
session's events and render them as safe HTML; none of them runs a turn of its own."""
