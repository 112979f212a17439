"""The loop and what it needs between turns: `Agent` (loop.py), the kernel's one conversation and
its turn path for every surface (session.py, approver.py), the approval policy, the context window
and its compaction, token estimates, and model strings. It yields events; it never renders."""
