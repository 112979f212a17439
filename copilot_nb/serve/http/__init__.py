"""The proxy's HTTP plumbing: the gate (token, origin, host), deadlines, refusals, replies, and
where it was started."""
