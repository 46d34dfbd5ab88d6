"""The owner checks of build folders and running trials: a pid is alive only while the process
that recorded it runs (psutil), a reused pid or a zombie is not."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from privrepro.processes import process_alive, process_start


def test_this_process_is_alive_with_its_own_start_and_not_with_another() -> None:
    start = process_start(os.getpid())
    assert start is not None and start <= time.time()
    assert process_alive(os.getpid(), start)
    assert process_alive(os.getpid(), None)
    assert not process_alive(os.getpid(), start + 1.0)  # the pid now another process's
    assert not process_alive(0, None) and not process_alive(-3, None)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux /proc only")
def test_an_exited_process_is_not_alive_reaped_or_zombie() -> None:
    reaped = subprocess.run([sys.executable, "-c", "pass"], check=True)
    assert reaped.returncode == 0
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    start = process_start(child.pid)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # exited, not yet reaped: a zombie
        try:
            with open(f"/proc/{child.pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
        except OSError:
            break
        time.sleep(0.05)
    assert not process_alive(child.pid, start)
    child.wait()
    assert not process_alive(child.pid, start) and process_start(child.pid) is None


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux /proc only")
def test_a_start_recorded_in_clock_ticks_before_psutil_still_matches() -> None:
    """Build folders written before start times came from psutil hold the clock ticks since boot
    of /proc/<pid>/stat (field 22)."""
    ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
    assert process_alive(os.getpid(), ticks)
    assert not process_alive(os.getpid(), ticks + 7)
