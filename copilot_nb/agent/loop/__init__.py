"""The agent loop (`rounds`) and what it alone uses: its settings, the calls it keeps, a
reply cut off mid-call, and the events a running tool sends."""
