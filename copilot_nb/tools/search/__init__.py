"""Finding things in the workspace: `find_files`, `search_text`, `move_path`, `delete_path`; the
walk git would make, the regex engine that cannot freeze, and ripgrep where it pays."""
