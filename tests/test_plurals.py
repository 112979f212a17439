"""Counts are said as a reader says them: "1 path", "2 paths", never "path(s)"."""

from __future__ import annotations

from copilot_nb.text import counted


def test_a_count_takes_its_noun_in_the_number_it_needs():
    assert counted(1, "path") == "1 path"
    assert counted(2, "path") == "2 paths"
    assert counted(0, "request") == "0 requests"
    assert counted(1_024, "line") == "1,024 lines"
    assert counted(2, "match", "matches") == "2 matches" and counted(1, "match") == "1 match"
