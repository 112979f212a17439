"""Run in jupyter-ai's own environment: a chat with the copilot_nb persona loaded from the chat's
`.jupyter/personas/`, one message sent to it, and the chat's messages printed as JSON lines.

Usage: python drive.py ROOT "message" (the persona file must be in ROOT/.jupyter/personas/)."""

import asyncio
import json
import logging
import sys

from jupyter_ai_persona_manager.persona_manager import PersonaManager
from jupyterlab_chat.models import NewMessage
from jupyterlab_chat.ychat import YChat

TIMEOUT = 120.0


async def main(root: str, text: str) -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    chat = YChat()
    chat.initial_path = "talk.chat"
    manager = PersonaManager(chat=chat, root_dir=root, event_loop=asyncio.get_running_loop())
    [persona] = [p for p in manager.personas.values() if p.name == "copilot_nb"]
    message_id = chat.add_message(
        NewMessage(body=f"@{persona.as_user().mention_name} {text}", sender="user")
    )
    message = chat.get_message(message_id)
    await asyncio.wait_for(persona.prepare(), TIMEOUT)
    await asyncio.wait_for(persona.process_message(message), TIMEOUT)
    for shown in chat.get_messages():
        print(json.dumps({"sender": shown.sender, "body": shown.body}), flush=True)
    process = await persona.get_agent_subprocess()
    process.terminate()
    await process.wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
