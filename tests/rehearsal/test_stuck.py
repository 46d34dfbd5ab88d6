"""A unit stuck inside one call past its timeout becomes a lower-bound row, not a hang."""

from __future__ import annotations

import threading

from privrepro.rehearsal.cap import RehearsalCap
from privrepro.rehearsal.measure import watch_unit


def test_a_unit_inside_one_call_past_its_time_is_handed_over_with_what_it_measured() -> None:
    """A unit runs one capped loop of 5 items to its end (2 run), then enters another and blocks
    inside its first item in one call (here a wait on an event, as a long LAPACK call keeps the
    timer's signal handler from running). 0.2 s after the unit started the watcher hands over a
    ``timeout`` run (a lower bound: ended early) holding the closed loop's record and not the open
    one, whose time so far counts once, outside loops; then it releases the call. A unit that
    ends in time is never handed over."""
    handed = []
    release = threading.Event()

    def stuck(run: object) -> None:
        handed.append(run)
        release.set()

    cap = RehearsalCap(items=2)
    with watch_unit(cap, 0.2, stuck, "unit 0"), cap.active(count_operations=False):
        for _ in cap(range(5), "draws"):
            sum(range(1000))
        for _ in cap(range(5), "chunks"):
            assert release.wait(30)
    (run,) = handed
    assert run.status == "timeout" and run.ended_early
    assert "unit 0 still running 0.2 s after it started" in run.note and "lower bound" in run.note
    assert [r.desc for r in run.cap.records] == ["draws"]
    assert run.cap.records[0].done == 2 and run.clock_s >= run.cap.records[0].measured_s
    quick = RehearsalCap(items=2)
    with watch_unit(quick, 30.0, stuck, "unit 1"):
        pass
    assert len(handed) == 1
