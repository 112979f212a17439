"""The chat panel: an anywidget (widget.py) whose front end (front.js, markdown.js, CSS) keeps the
transcript, fed small batched ops (feed.py) from the session's events."""
