"""Cassettes: a kernel's model traffic and approval answers recorded to a file and replayed
offline through the same decoders (the recording transport, its entries, signing and diffs)."""
