"""What the model sees of cell outputs and live objects: short, plain, cut where a reader would
cut, read without running their code."""
