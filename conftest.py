"""pytest at the repository root: the demo notebooks (nbval) and the tests share these plugins."""

pytest_plugins = ["tests.nbval_display_updates"]
