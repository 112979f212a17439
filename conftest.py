"""pytest at the repository root: what the demo notebooks (nbval) and the tests share.

The kernels nbval starts for the demo notebooks inherit this process's environment; a reader's
own settings (their MCP servers, their instructions file) would change every request the demos
replay, and `COPILOT_NB_CASSETTE=record` in their shell would record over them. They get an
empty settings folder for the session, as each test does, and no cassette mode of the shell's.
"""

import os
import tempfile

pytest_plugins = ["tests.nbval_display_updates"]

_settings = tempfile.mkdtemp(prefix="copilot_nb_settings_")
os.environ["XDG_CONFIG_HOME"] = _settings
os.environ["COPILOT_NB_CONFIG_DIR"] = os.path.join(_settings, "copilot_nb")
for _name in ("COPILOT_NB_CASSETTE", "COPILOT_NB_CASSETTE_NOTE", "COPILOT_NB_MODEL"):
    os.environ.pop(_name, None)
