"""What a cell does outside the kernel's names, read from its syntax tree and never run. Pure.

The rebuild plan the user approves says it of each cell it will run (`rebuild.py`), so it errs
towards saying so. A cell runs commands (a shell escape `!cmd`, `%%bash`, `%sx`, `%pip`,
`subprocess`, `os.system`, `os.popen`), runs code from elsewhere (`%run`, `%load`, `importlib`,
`__import__`, `exec`), reads files or the network (`open`, `read_csv` however it was imported or
renamed, `requests`, `socket`, `pickle`), or runs another magic (`%cd`, `%env`, `%%writefile`,
`%%javascript`: any but a few that only show things).

IPython's syntax is made Python by IPython's own transformer before the tree is read
(`names.py`): `!curl … | sh` reads as `get_ipython().system('curl … | sh')`, `%run x.py` as
`get_ipython().run_line_magic('run', 'x.py')`, `%%bash` as `run_cell_magic('bash', …)`, so a
magic is told by its name, and the code a Python magic runs (`%time`, `%timeit`, `%%capture`)
is read as Python in its turn (`python_of`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

COMMANDS = "runs commands"
CODE = "runs code from elsewhere"
READS = "reads files or the network"
MAGICS = "runs magics"
KINDS = (COMMANDS, CODE, READS, MAGICS)
"""What a cell may do outside, in the order a plan says them."""

READERS = frozenset(
    {
        "open", "read_csv", "read_parquet", "read_excel", "read_json", "read_table", "read_sql",
        "read_sql_query", "read_sql_table", "read_feather", "read_pickle", "read_hdf", "read_fwf",
        "read_html", "read_xml", "read_orc", "read_sas", "read_spss", "read_stata", "read_clipboard",
        "read_text", "read_bytes", "load", "loadtxt", "genfromtxt", "fromfile", "memmap",
        "imread", "load_dataset", "load_workbook", "urlopen", "urlretrieve", "from_pretrained",
    }
)  # fmt: skip
"""Functions and methods that read a file or the network, under any name they are reached by."""
MODULES = {
    **dict.fromkeys(
        ("subprocess", "pty", "pexpect", "sh", "plumbum", "commands"), COMMANDS
    ),
    **dict.fromkeys(
        ("importlib", "runpy", "imp", "ctypes", "cffi", "code", "codeop", "zipimport", "pkgutil"),
        CODE,
    ),
    **dict.fromkeys(
        (
            "requests", "urllib", "urllib2", "urllib3", "http", "httpx", "aiohttp", "socket",
            "ssl", "ftplib", "smtplib", "poplib", "imaplib", "telnetlib", "xmlrpc", "paramiko",
            "boto3", "botocore", "websocket", "websockets", "grpc", "pycurl", "wget", "gdown",
            "huggingface_hub", "kaggle", "s3fs", "gcsfs", "fsspec", "smart_open",
            "pickle", "dill", "joblib", "shelve", "marshal", "sqlite3", "shutil", "glob",
            "zipfile", "tarfile", "h5py",
        ),
        READS,
    ),
}  # fmt: skip
"""Modules whose use means commands, code from elsewhere, or files and the network."""
OS_COMMANDS = re.compile(r"system|popen|startfile|fork|forkpty|posix_spawnp?|exec\w*|spawn\w*")
"""What `os` runs commands with."""
CALLS = {
    **dict.fromkeys(("exec", "eval", "compile", "__import__", "execfile", "runfile"), CODE),
    **dict.fromkeys(("create_subprocess_exec", "create_subprocess_shell"), COMMANDS),
}
"""Functions that run code or commands, called by name or as a method."""
SHELL_METHODS = frozenset({"system", "getoutput", "system_piped", "system_raw"})
"""The shell's methods behind `!cmd` and `x = !cmd`."""
CODE_METHODS = frozenset({"run_cell", "run_code", "safe_execfile", "safe_run_module"})
MAGIC_METHODS = frozenset({"run_line_magic", "run_cell_magic", "magic"})
SHELL_MAGICS = frozenset(
    {
        "sx", "system", "bash", "sh", "script", "!", "perl", "ruby", "python", "python2",
        "python3", "pypy", "pip", "conda", "mamba", "micromamba", "uv",
    }
)  # fmt: skip
CODE_MAGICS = frozenset(
    {
        "run", "load", "loadpy", "load_ext", "reload_ext", "aimport", "autoreload", "store",
        "macro", "rerun", "recall", "paste", "cpaste", "edit",
    }
)  # fmt: skip
PYTHON_MAGICS = frozenset({"time", "timeit", "capture", "prun"})
"""Magics that run their argument (a line magic) or body (a cell magic) as Python."""
QUIET_MAGICS = frozenset(
    {
        "matplotlib", "who", "whos", "who_ls", "pprint", "precision", "pwd", "xmode", "lsmagic",
        "pinfo", "pinfo2", "pdoc", "pdef", "psource",
    }
)  # fmt: skip
"""Magics that only show or set how things show: not said."""
_OPTIONS = re.compile(r"^(?:\s*-[A-Za-z]+(?:\s+\d+)?)*\s*")
"""The options before a Python magic's code (`%timeit -n 10 -r 3 f()`)."""


@dataclass(frozen=True, kw_only=True)
class Effect:
    """One way a cell reaches outside the kernel: what kind, and what does it (`!curl`)."""

    kind: str
    what: str

    def __str__(self) -> str:
        return self.what


def of_name(name: str) -> list[Effect]:
    """A name a cell reads: a module's (`subprocess`), a reader's or a code runner's."""
    if name in MODULES:
        return [Effect(kind=MODULES[name], what=name)]
    if name in CALLS:
        return [Effect(kind=CALLS[name], what=name)]
    if name in READERS:
        return [Effect(kind=READS, what=name)]
    return []


def of_attribute(root: str | None, attribute: str) -> list[Effect]:
    """`os.system`, `pd.read_csv`, `loop.create_subprocess_exec`: an attribute a cell reads."""
    if root == "os" and OS_COMMANDS.fullmatch(attribute):
        return [Effect(kind=COMMANDS, what=f"os.{attribute}")]
    if attribute in CALLS and attribute not in ("compile", "eval"):  # re.compile, model.eval
        return [Effect(kind=CALLS[attribute], what=attribute)]
    if attribute in READERS:
        return [Effect(kind=READS, what=attribute)]
    return []


def of_import(module: str, name: str | None = None, alias: str | None = None) -> list[Effect]:
    """`import module`, or `from module import name as alias`."""
    top = module.split(".")[0]
    found = [Effect(kind=MODULES[top], what=top)] if top in MODULES else []
    if name is None or name == "*":
        return found
    renamed = f"{name} (as {alias})" if alias and alias != name else name
    if top == "os" and OS_COMMANDS.fullmatch(name):
        found.append(Effect(kind=COMMANDS, what=f"os.{renamed}"))
    elif name in CALLS:
        found.append(Effect(kind=CALLS[name], what=renamed))
    elif name in READERS:
        found.append(Effect(kind=READS, what=renamed))
    return found


def imported(node: ast.Import | ast.ImportFrom) -> list[tuple[str, Effect]]:
    """The names an import binds that reach outside, each with what it is."""
    found = []
    for alias in node.names:
        if isinstance(node, ast.ImportFrom):
            effects = of_import(node.module or "", alias.name, alias.asname)
        else:
            effects = of_import(alias.name)
        bound = alias.asname or alias.name.split(".")[0]
        found += [(bound, effect) for effect in effects if alias.name != "*"]
    return found


def of_call(node: ast.Call) -> tuple[list[Effect], list[tuple[str, str]]]:
    """What a call to the shell's methods does (`get_ipython().system(...)`, a magic), and
    the Python code a Python magic runs: (magic, source) to read in its turn."""
    function = node.func
    if not isinstance(function, ast.Attribute) or not _on_shell(function.value):
        return [], []
    method, args = function.attr, [_text(arg) for arg in node.args]
    if method in SHELL_METHODS:
        command = (args[0] or "").split()
        return [Effect(kind=COMMANDS, what="!" + (command[0] if command else "…"))], []
    if method in CODE_METHODS:
        return [Effect(kind=CODE, what=f"get_ipython().{method}")], []
    if method not in MAGIC_METHODS or not args or args[0] is None:
        return [], []
    name, _, rest = args[0].lstrip("%").partition(" ")
    cell = method == "run_cell_magic"
    shown = ("%%" if cell else "%") + name
    if name in PYTHON_MAGICS:
        if cell:
            code = args[2] if len(args) > 2 else None
        else:
            code = rest if method == "magic" else args[1] if len(args) > 1 else None
        if code is None:
            return [unread(shown)], []
        return [], [(shown, python_of(code))]
    if name in QUIET_MAGICS:
        return [], []
    kind = COMMANDS if name in SHELL_MAGICS else CODE if name in CODE_MAGICS else MAGICS
    return [Effect(kind=kind, what=shown)], []


def python_of(code: str) -> str:
    """A Python magic's code without its options (`-n 10 f()` is `f()`)."""
    return _OPTIONS.sub("", code, count=1) if code.lstrip().startswith("-") else code


def unread(magic: str) -> Effect:
    """A Python magic whose code could not be read: said, as its code may do anything."""
    return Effect(kind=MAGICS, what=f"{magic} (its code could not be read)")


def _on_shell(node: ast.expr) -> bool:
    """`get_ipython()` (or a name it was kept under: `ip`, `shell`)."""
    if isinstance(node, ast.Call):
        return getattr(node.func, "id", "") == "get_ipython"
    return isinstance(node, ast.Name) and node.id in ("ip", "ipython", "shell", "_ip")


def _text(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
