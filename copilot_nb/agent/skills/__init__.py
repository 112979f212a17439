"""Agent Skills: folders of instructions (a `SKILL.md`, optional scripts and files) the model
loads when a request needs them.

`discovery.py` finds them where other agents look (project, user and administrator folders;
the project's from the notebook's folder up to the repository's root, `project.py`) and in the
packages the kernel has imported (`packages.py`); `skill_file.py` reads and checks one
as the agentskills.io reference does; `block.py` lists their names and descriptions in the
system prompt within a budget; `tool.py` is `load_skill`, which hands the model a skill's body
and files only when it asks; `scripts.py` keeps a skill's script from running unseen, knowing
it by its text (`texts.py`) wherever it is pasted.
"""
