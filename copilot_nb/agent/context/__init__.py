"""What fits in the model's context: token estimates calibrated by reported usage (`tokens`), the
budget and windows of a request (`window`), and old results shortened, then summarised
(`compaction`)."""
