"""Conversations that live with the notebook: written down as each turn goes, resumed after a
restart, listed, exported and priced (`format` the records, `store` the file, `recorder` the
writer a session drives, `resume` the history rebuilt, `usage` the sums, `transcript` Markdown)."""
