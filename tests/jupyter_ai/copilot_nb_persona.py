"""copilot_nb as a jupyter-ai persona: put this file in `.jupyter/personas/` beside the chat (or
register the class under the `jupyter_ai.personas` entry point). jupyter-ai's ACP client starts
`copilot-nb acp` and talks to it over the Agent Client Protocol.

`COPILOT_NB_ACP_COMMAND` (a JSON list) overrides the command line, for a copilot_nb installed
in another environment than the Jupyter server's."""

import json
import os

from jupyter_ai_acp_client.base_acp_persona import BaseAcpPersona
from jupyter_ai_persona_manager import PersonaDefaults


class CopilotNbPersona(BaseAcpPersona):
    def __init__(self, *args, **kwargs):
        command = json.loads(os.environ.get("COPILOT_NB_ACP_COMMAND", '["copilot-nb", "acp"]'))
        super().__init__(*args, executable=command, **kwargs)

    @property
    def defaults(self) -> PersonaDefaults:
        return PersonaDefaults(
            name="copilot_nb",
            description="The notebook agent that lives in a kernel, over ACP.",
            avatar_path=os.path.join(os.path.dirname(__file__), "copilot_nb.svg"),
            system_prompt="unused",
        )
