"""The loop and what it needs between turns: `Agent` (loop.py), the kernel's one conversation and
its turn path for every surface (session.py, turn.py, stages.py), and its families: what the model
is told (prompt/), who may let a tool run (approvals/), what fits the window (context/), the modes
(modes/), saved conversations (conversations/) and ghost text (ghost_text/). It yields events; it
never renders."""
