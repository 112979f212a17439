"""The notebook tools: cells listed, read and changed in the open notebook or its file, `run_cell`,
and what a Markdown cell may load."""
