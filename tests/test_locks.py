"""locks.hold: one process at a time holds a folder, and a killed one lets go."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from topicspider.locks import hold

HOLDER = """
import sys, time
from pathlib import Path
from topicspider.locks import hold
hold(Path(sys.argv[1]), "busy")
print("held", flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("target", ["folder", "folder/.lock"])
def test_a_path_another_process_holds_is_refused_until_it_is_killed(tmp_path, target):
    (tmp_path / "folder").mkdir()
    path = tmp_path / target
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(BlockingIOError, match=r"^another crawl has it$"):
            hold(path, "another crawl has it")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        holder.stdout.close()
    os.close(hold(path, "another crawl has it"))  # kill -9 left nothing locked
    assert sorted(p.name for p in (tmp_path / "folder").iterdir()) == (
        [".lock"] if target.endswith(".lock") else []
    )


def test_a_lock_file_is_made_with_the_mode_asked_for(tmp_path):
    handle = hold(tmp_path / ".lock", "busy", mode=0o600)
    os.close(handle)
    assert (tmp_path / ".lock").stat().st_mode & 0o777 == 0o600
