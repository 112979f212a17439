"""copilot_nb as an Agent Client Protocol agent (`copilot-nb acp`): editors that speak ACP (Zed,
JetBrains, jupyter-ai, marimo, Neovim, Emacs) drive the notebook agent over stdio.

Each ACP session is a real IPython kernel with copilot_nb loaded; the turn runs inside it, through
the same `CopilotSession.turn()` a `%%copilot` cell runs, and its events come back over a comm
(`kernel_end.py` in the kernel, `kernel_link.py` in the agent process) to be mapped onto ACP
updates (`updates.py`). The SDK (`agent-client-protocol`) is the optional extra `acp`, imported
only by the agent process, never at `%load_ext`.
"""
