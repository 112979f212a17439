"""The model's side of `notebooks/01_quickstart.ipynb`: what the loopback server answers, in order."""

from copilot_nb.testing import call, reply

PROVIDER = "openai"
STEPS = [
    reply("I'll read the file first.", call("read_file", path="hello.py")),
    reply(
        "",
        call(
            "edit_file",
            path="hello.py",
            old_str='return "hello, world"',
            new_str='return "hello, notebook"',
        ),
    ),
    reply('Done: `greet()` in **hello.py** now returns `"hello, notebook"`.'),
    reply(
        "`hello.py` defines one function, `greet()`, which returns the string "
        '`"hello, notebook"`; run as a script, it prints that greeting.'
    ),
]
