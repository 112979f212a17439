"""pytest at the repository root: what the demo notebooks (nbval) and the tests share.

The kernels nbval starts for the demo notebooks inherit this process's environment; a reader's
own settings (their MCP servers, their instructions file, their chosen model) would change every request the demos
replay, and `COPILOT_NB_CASSETTE=record` in their shell would record over them. They get an
empty settings folder for the session, as each test does, and none of the shell's provider
settings or cassette mode (the variables a demo run clears, `demo_notebooks.PROVIDER_VARIABLES`).
"""

import os
import tempfile

from copilot_nb.testing.demo_notebooks import PROVIDER_VARIABLES

pytest_plugins = ["tests.nbval_display_updates", "tests.tiers"]

_settings = tempfile.mkdtemp(prefix="copilot_nb_settings_")
os.environ["XDG_CONFIG_HOME"] = _settings
os.environ["COPILOT_NB_CONFIG_DIR"] = os.path.join(_settings, "copilot_nb")
# Nor the model a reader chose in JupyterLab's settings, nor a key saved in their system keyring.
os.environ["JUPYTERLAB_SETTINGS_DIR"] = os.path.join(_settings, "lab-user-settings")
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
for _name in (*PROVIDER_VARIABLES, "COPILOT_NB_CASSETTE_NOTE"):
    os.environ.pop(_name, None)
