"""`%copilot snapshot`: variables saved beside the notebook, and loaded only from the user's own
signed file, checked for size and signature before anything of it is read."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pandas as pd
import pytest

from copilot_nb.errors import SandboxError
from copilot_nb.tools.kernel.saved_vars import load, path_for, save
from tests.helpers import Planted

TOKEN = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 3


def test_saved_variables_come_back_from_a_file_the_user_saved(tmp_path: Path) -> None:
    path = path_for(tmp_path / "work.ipynb")
    assert path.name == "work.copilot-vars.pkl"
    namespace = {"df": pd.DataFrame({"a": [1, 2]}), "api_key": TOKEN, "gen": (i for i in [1])}
    saved = save(path, namespace, ["df", "api_key", "gen", "nope"])
    assert saved.names == ("df",)
    assert saved.left == {
        "api_key": "a secret: never kept",
        "gen": "a generator: cannot be copied",
        "nope": "not defined",
    }
    assert path.stat().st_mode & 0o777 == 0o600
    assert TOKEN.encode() not in path.read_bytes()
    found, values = load(path)
    assert found.names == ("df",)
    pd.testing.assert_frame_equal(values["df"], namespace["df"])


@pytest.mark.parametrize("how", ["unsigned", "edited", "shared", "link"])
def test_a_snapshot_file_from_elsewhere_is_refused_and_nothing_in_it_runs(
    tmp_path: Path, how: str
) -> None:
    path, mark = path_for(tmp_path / "work.ipynb"), tmp_path / "ran"
    crafted = pickle.dumps({"df": Planted(mark)})
    if how == "unsigned":  # a file made elsewhere: a header, but no signature of this user's
        header = {"format": 1, "names": ["df"], "at": "2026-01-01T00:00:00Z", "sig": "0" * 64}
        path.write_bytes(json.dumps(header).encode() + b"\n" + crafted)
        path.chmod(0o600)
    elif how == "edited":  # the user's own file, its payload swapped afterwards
        save(path, {"df": 1}, ["df"])
        head = path.read_bytes().split(b"\n", 1)[0]
        path.write_bytes(head + b"\n" + crafted)
    elif how == "shared":  # signed by the user, then made readable by others
        save(path, {"df": 1}, ["df"])
        path.chmod(0o644)
    else:
        save(tmp_path / "elsewhere.pkl", {"df": 1}, ["df"])
        path.symlink_to(tmp_path / "elsewhere.pkl")
    with pytest.raises(SandboxError) as refused:
        load(path)
    assert not mark.exists(), "nothing was unpickled"
    if how in ("unsigned", "edited"):
        assert "was not saved by you" in str(refused.value)
        assert "nothing in it was loaded" in str(refused.value)


def test_a_snapshot_over_the_size_cap_is_refused_before_any_of_it_is_read(tmp_path: Path) -> None:
    path = path_for(tmp_path / "work.ipynb")
    save(path, {"rows": list(range(300_000))}, ["rows"])  # a file the user saved: 1.3 MB
    with pytest.raises(SandboxError) as refused:
        load(path, max_bytes=1024 * 1024)
    assert f"{path.name} is 1.3 MB, over the 1.0 MB a snapshot may be" in str(refused.value)
    assert "nothing in it was loaded" in str(refused.value)
    with pytest.raises(SandboxError) as too_big:
        save(path, {"rows": list(range(300_000))}, ["rows"], max_bytes=1024 * 1024)
    assert "over the 1.0 MB a snapshot may be; save fewer or smaller variables" in str(
        too_big.value
    )


def test_an_unsigned_64_mb_snapshot_is_refused_in_small_reads(tmp_path: Path) -> None:
    """The signature is checked over the file in chunks: nothing is read whole before it."""
    import tracemalloc

    path, mark = path_for(tmp_path / "work.ipynb"), tmp_path / "ran"
    header = {"format": 1, "names": ["df"], "at": "2026-01-01T00:00:00Z", "sig": "0" * 64}
    with path.open("wb") as out:
        out.write(json.dumps(header).encode() + b"\n" + pickle.dumps({"df": Planted(mark)}))
        out.truncate(64 * 1024 * 1024)  # sparse: 64 MB to read, nothing on disk
    path.chmod(0o600)
    tracemalloc.start()
    try:
        with pytest.raises(SandboxError, match="was not saved by you"):
            load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024 * 1024, f"{peak:,} bytes held while checking a 64 MB file"
    assert not mark.exists()
