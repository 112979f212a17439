"""Notebook tasks for copilot_nb, run through `%%copilot` in a real kernel and checked.

`make eval MODEL=provider:model` (or `python -m evals.run --model ...`) runs every task in
`evals/tasks/` and prints a table and JSON; see docs/evaluation.md.
"""
