"""What writing a file leads to later, so an approval prompt can say it before the user says yes.

Some files an agent may be allowed to write are everyday project files that are also programs
or instructions: a Makefile, a shell's start-up file when the workspace is a home folder, a CI
workflow, `AGENTS.md`. Refusing them would stop ordinary work; approving them unwarned lets a
hijacked model plant code that runs later, outside any approval, or text the next agent obeys.
So the prompt names the effect and the reason: "AGENTS.md instructs future agents: …".

Rules are the write policy's globs (`DenyRule`: gitignore-style, case-insensitive, a pattern
without a slash at any depth, a folder covers everything under it): a home folder may be the
workspace or any folder in it. Files the policy refuses anyway are told as running code later.
"""

from __future__ import annotations

from .write_policy import DEFAULT_DENY, DenyRule

RUNS_CODE_LATER = "runs code later"
RUNS_IN_CI = "runs in CI"
INSTRUCTS_AGENTS = "instructs future agents"

_BASH = "bash runs it in every new interactive shell"
_LOGIN = "your shell runs it whenever you log in"
_ZSH = "zsh runs it in every new shell"
_SESSION = "your desktop session runs it when you log in"
_VIM = "Vim runs the commands in it when it starts"
_EMACS = "Emacs runs the Lisp in it when it starts"
_GIT = (
    "git runs the programs its config names (core.fsmonitor, core.hooksPath, '!' aliases, filters)"
)
_PYTHON_STARTUP = "Python runs it at start-up where PYTHONSTARTUP names it"
_INDEX = "pip installs from the index it names, so it decides whose code pip runs"
_KERNELS = "Jupyter starts the program a kernel.json names whenever that kernel is picked"
_BROWSER_EXTENSIONS = (
    "Jupyter loads the extensions kept there into the browser, next to your kernels"
)
_CI = (
    "it runs with the repository's secrets (and a token that may push or publish) at the next push"
)
_INSTRUCTIONS = "what is written here becomes instructions a model obeys"


def _rules(reason: str, *patterns: str) -> tuple[DenyRule, ...]:
    return tuple(DenyRule(pattern=p, reason=reason) for p in patterns)


CODE: tuple[DenyRule, ...] = (
    # project files that run code when tools run
    *_rules("pytest imports it when tests run", "conftest.py"),
    *_rules("IPython runs it when it starts", "ipython_*config.py"),
    *_rules("Jupyter runs or loads it when it starts", "jupyter_*_config.*", "jupyter_config.*"),
    *_rules("IPython runs it whenever it starts", "**/.ipython/**/startup/*"),
    *_rules("git runs the hooks it names on commit", ".pre-commit-config.yaml"),
    *_rules("make runs its recipes", "Makefile"),
    *_rules("pip runs it when the project is installed", "setup.py"),
    *_rules("nox runs it", "noxfile.py"),
    *_rules("tox runs the commands it names", "tox.ini"),
    # shells and sessions, when the workspace is (or holds) a home folder
    *_rules(_BASH, ".bashrc", ".bash_aliases", ".bashrc.d"),
    *_rules(_LOGIN, ".bash_profile", ".bash_login", ".profile", ".login", ".zprofile", ".zlogin"),
    *_rules("your shell runs it when a login shell exits", ".bash_logout", ".zlogout", ".logout"),
    *_rules(_ZSH, ".zshrc", ".zshenv"),
    *_rules("your shell runs it in every new shell", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc"),
    *_rules("fish runs config.fish and the files in conf.d and functions", "**/.config/fish"),
    *_rules("PowerShell runs it when it starts", "**/powershell/*profile.ps1"),
    *_rules("PowerShell runs it when it starts", "**/windowspowershell/*profile.ps1"),
    *_rules("readline binds keys to text it types into your shell", ".inputrc"),
    *_rules(_SESSION, ".xprofile", ".xinitrc", ".xsession", ".xsessionrc"),
    *_rules(
        "it sets your session's environment (PATH, LD_PRELOAD)",
        "**/.config/environment.d",
        ".pam_environment",
    ),
    *_rules("your desktop session starts the programs named there", "**/.config/autostart"),
    *_rules(
        "systemd starts the services and timers defined there",
        "**/.config/systemd/user",
        "**/.local/share/systemd/user",
    ),
    *_rules("launchd starts the programs named there when you log in", "**/Library/LaunchAgents"),
    *_rules("Windows starts the programs there when you log in", "**/Start Menu/Programs/Startup"),
    *_rules("cron runs the commands it lists", "crontab", "crontabs", "cron.d"),
    # editors and terminals that run their configuration
    *_rules(_VIM, ".vimrc", ".gvimrc", ".exrc", "**/.vim", "**/.config/nvim"),
    *_rules(_EMACS, ".emacs", "**/.emacs.d", "**/.config/emacs"),
    *_rules("tmux runs the commands in it", ".tmux.conf", "**/.config/tmux"),
    # version control and package managers
    *_rules(_GIT, ".gitconfig", "**/.config/git"),
    *_rules("Mercurial runs the hooks it names", ".hgrc"),
    *_rules(_PYTHON_STARTUP, ".pythonrc", ".pythonrc.py", ".pystartup"),
    *_rules(_INDEX, "pip.conf", "pip.ini"),
    *_rules("uv installs from the index it names, so it decides whose code runs", "uv.toml"),
    *_rules("conda installs from the channels it names", ".condarc"),
    *_rules(
        "npm installs from the registry it names, and its script-shell and node-options "
        "decide what npm runs",
        ".npmrc",
    ),
    *_rules("yarn runs the program its yarnPath names", ".yarnrc.yml", ".yarnrc"),
    # Jupyter and IPython
    *_rules(_KERNELS, "**/jupyter/kernels", "kernel.json"),
    *_rules(_BROWSER_EXTENSIONS, "**/jupyter/labextensions", "**/jupyter/nbextensions"),
    *_rules(
        "Jupyter reads its settings there (.py config runs as Python, custom.js in the browser)",
        "**/.jupyter",
    ),
    *_rules("IPython runs its profiles' config files and startup scripts", "**/.ipython"),
    # agents that start programs
    *_rules("agents start the MCP servers it names as programs", ".mcp.json"),
    *_rules("agents start the MCP servers it names as programs", "**/.cursor/mcp.json"),
    *_rules("Claude Code runs the hook commands it names", "**/.claude/settings*.json"),
    *_rules("Gemini CLI starts the tools and MCP servers it names", "**/.gemini/settings.json"),
)
"""Files that run code later: a change may be approved, but the prompt says so."""

CONTINUOUS_INTEGRATION: tuple[DenyRule, ...] = _rules(
    _CI,
    "**/.github/workflows",
    "**/.github/actions",
    ".gitlab-ci.yml",
    "**/.gitlab/ci",
    ".circleci",
    "azure-pipelines.yml",
    "azure-pipelines.yaml",
    ".azure-pipelines",
    "Jenkinsfile",
    ".travis.yml",
    "bitbucket-pipelines.yml",
    ".buildkite",
    ".drone.yml",
    ".woodpecker.yml",
    ".woodpecker",
    "appveyor.yml",
    ".appveyor.yml",
    "buildspec.yml",
    "cloudbuild.yaml",
    "cloudbuild.yml",
)
"""CI definitions: they run on the CI service, with the repository's secrets and a token that may
push or publish, the next time anyone pushes."""

AGENT_INSTRUCTIONS: tuple[DenyRule, ...] = _rules(
    _INSTRUCTIONS,
    # what copilot_nb itself reads (agent/prompt/instructions.py, agent/subagents.py)
    "AGENTS.md",
    "**/.github/copilot-instructions.md",
    "CLAUDE.md",
    "**/.copilot_nb/agents",
    "**/.copilot_nb/instructions*",
    # what other agents read
    "AGENT.md",
    "CLAUDE.local.md",
    "GEMINI.md",
    "**/.github/instructions",
    "**/.github/prompts",
    "**/.github/chatmodes",
    "**/.github/agents",
    "**/.claude",
    ".cursorrules",
    "**/.cursor/rules",
    ".windsurfrules",
    ".clinerules",
    # Agent Skills, read by copilot_nb (agent/skills/) and the other agents
    "SKILL.md",
    "**/.github/skills",
    "**/.agents/skills",
    "**/.copilot/skills",
    "**/.jupyter/skills",
    "**/*.agent-plugin/skills",
)
"""Instruction files: a hijacked model that writes one hijacks every agent that reads it later."""

EFFECTS: tuple[tuple[str, tuple[DenyRule, ...]], ...] = (
    (RUNS_CODE_LATER, (*CODE, *DEFAULT_DENY)),
    (RUNS_IN_CI, CONTINUOUS_INTEGRATION),
    (INSTRUCTS_AGENTS, AGENT_INSTRUCTIONS),
)
"""Each effect and its rules, in the order they are told: code first, as it is the worst."""


def later_effect(relative: str) -> str | None:
    """What writing this root-relative posix path leads to, and why ("runs in CI: …"), or None."""
    for effect, rules in EFFECTS:
        for rule in rules:
            if rule.matches(relative):
                return f"{effect}: {rule.reason}"
    return None
