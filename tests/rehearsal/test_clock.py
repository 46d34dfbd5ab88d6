"""The rehearsal's clock: a loop's time is the thread's CPU time, so that another process
holding the CPU does not make the work look longer."""

from __future__ import annotations

import threading
import time

from privrepro.rehearsal.cap import RehearsalCap
from privrepro.rehearsal.measure import unit_clock


def test_a_loops_host_time_does_not_grow_while_the_cpu_is_held_by_other_work() -> None:
    """Another thread spins in pure Python for the whole loop (it holds the interpreter and a
    core, as another process holds the core on a loaded machine), and each item waits 50 ms off
    the CPU (``sleep``: the time a descheduled thread waits for a core). On the cap's default
    clock, the thread's CPU time, neither counts: the loop's measured time, and with it its host
    time (the part of a GPU prediction the CPU measures), stays under half its wall time (two
    items: at least 100 ms of wall, by sleep's guarantee, against the microseconds of CPU the
    items spend). The same loop on the wall clock counts every waited millisecond."""
    stop = threading.Event()

    def hog() -> None:
        while not stop.is_set():
            sum(range(1000))

    spinner = threading.Thread(target=hog, daemon=True)
    spinner.start()
    try:
        measured = {}
        for name, clock in (("cpu", RehearsalCap().clock), ("wall", time.perf_counter)):
            cap = RehearsalCap(items=2, clock=clock)
            start = time.perf_counter()
            with cap.active(count_operations=False):
                for _ in cap(range(10), "steps"):
                    time.sleep(0.05)
            measured[name] = (cap.records[0], time.perf_counter() - start)
    finally:
        stop.set()
        spinner.join()
    rec, wall = measured["cpu"]
    assert wall >= 2 * 0.05 and rec.done == 2
    assert rec.measured_s < 0.5 * wall
    assert rec.at_full_size("host") <= rec.measured_s
    assert rec.predicted_s < 10 * 0.05 and rec.predicted_device_s < 10 * 0.05
    on_wall, _ = measured["wall"]
    assert on_wall.measured_s >= 2 * 0.05
    assert on_wall.predicted_s >= 10 * 0.05


def test_the_rehearsal_reads_cpu_time_on_a_cpu_and_the_wall_on_a_gpu() -> None:
    """On a GPU the kernels run while the thread waits for them: its CPU time would miss them."""
    assert RehearsalCap().clock is time.thread_time
    assert unit_clock("cpu") is time.thread_time
    assert unit_clock("cuda") is time.perf_counter
