"""The one door to the file system: `Workspace` (paths that stay inside the root, atomic writes),
the write policy and the secret-path rules, globs, notebook files, and per-turn checkpoints that
undo restores."""
