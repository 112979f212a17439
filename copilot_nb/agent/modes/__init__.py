"""How far a turn may go: the mode names the magics need at `%load_ext` (`names`, which loads
nothing else), *ask* / *plan* / *agent* enforced by the tools offered (`run`), and review for one
turn (`review`)."""
