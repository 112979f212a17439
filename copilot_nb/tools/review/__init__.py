"""The agent's changes under review: the ledger of Keep and Undo, and the proof that a record
is this user's own."""
