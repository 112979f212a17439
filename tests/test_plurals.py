"""Counts are said as a reader says them: "1 path", "2 paths", never "path(s)"."""

from __future__ import annotations

from copilot_nb.text import counted


def test_a_count_takes_its_noun_in_the_number_it_needs():
    assert counted(1, "path") == "1 path"
    assert counted(2, "path") == "2 paths"
    assert counted(0, "request") == "0 requests"
    assert counted(1_024, "line") == "1,024 lines"
    assert counted(2, "match", "matches") == "2 matches" and counted(1, "match") == "1 match"


def _strings_saying_s_in_parentheses() -> list[str]:
    """Every string literal of the package that says `(s)`, `(es)` or `(ies)` (not `http(s)`)."""
    import io
    import re
    import tokenize
    from pathlib import Path

    import copilot_nb

    hedged = re.compile(r"(?<!http)\((?:s|es|ies)\)")
    texts = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}  # 3.12's
    found = []
    for path in sorted(Path(copilot_nb.__file__).parent.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in texts and hedged.search(token.string):
                found.append(f"{path.name}:{token.start[0]}: {token.string[:80]}")
    return found


def test_no_text_of_the_package_hedges_a_plural():
    assert _strings_saying_s_in_parentheses() == []
