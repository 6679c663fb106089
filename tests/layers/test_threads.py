"""``imagelint.layers.threads``: the layer readers' threads keep ThreadPoolExecutor's contract."""

from __future__ import annotations

import threading
import time

import pytest

from imagelint.layers.threads import LayerThreads


def test_results_in_submission_order_on_the_number_of_threads_asked_for() -> None:
    started: list[int] = []
    names: set[str] = set()
    lock = threading.Lock()

    def call(i: int) -> int:
        with lock:
            started.append(i)
            names.add(threading.current_thread().name)
        time.sleep(0.01)
        return i * i

    with LayerThreads(2, "t") as pool:
        jobs = [pool.submit(call, i) for i in range(6)]
        done, pending = pool.wait_for_failure(jobs)
    assert not pending and done == set(jobs)
    assert [j.result() for j in jobs] == [i * i for i in range(6)]
    assert started[:2] in ([0, 1], [1, 0]) and sorted(started) == list(range(6))
    assert names <= {"t_0", "t_1"} and len(names) == 2


def test_wait_returns_at_the_first_failure_and_pending_calls_can_be_cancelled() -> None:
    release, running = threading.Event(), threading.Event()

    def fail() -> None:
        raise ValueError("broken layer")

    def slow() -> str:
        running.set()
        release.wait(10)
        return "late"

    with LayerThreads(1, "t") as pool:  # one thread: fail, then slow; queued waits behind slow
        failing = pool.submit(fail)
        slow_job = pool.submit(slow)
        queued = pool.submit(lambda: "never")
        t0 = time.monotonic()
        done, pending = pool.wait_for_failure([slow_job, failing, queued])
        assert time.monotonic() - t0 < 5, "did not wait for the slow call"
        assert failing in done and {slow_job, queued} == pending
        assert running.wait(5)
        assert isinstance(failing.exception(), ValueError)
        with pytest.raises(ValueError):
            failing.result()
        assert queued.cancel() and queued.cancelled() and queued.done()
        assert not slow_job.cancel(), "a running call cannot be cancelled"
        release.set()
    assert slow_job.result() == "late", "the way out waits for running calls"
    with pytest.raises(RuntimeError):
        queued.exception()


def test_every_thread_is_joined_on_the_way_out_even_after_an_exception() -> None:
    before = set(threading.enumerate())
    with pytest.raises(KeyboardInterrupt):
        with LayerThreads(3, "t") as pool:
            jobs = [pool.submit(time.sleep, 0.02) for _ in range(5)]
            raise KeyboardInterrupt
    assert set(threading.enumerate()) == before
    assert all(j.done() and j.exception() is None for j in jobs), "queued calls still ran"
    with pytest.raises(RuntimeError):
        pool.submit(time.sleep, 0)


def test_a_base_exception_in_a_call_is_handed_to_the_waiter() -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    with LayerThreads(1, "t") as pool:
        job = pool.submit(interrupted)
        done, _ = pool.wait_for_failure([job])
    assert isinstance(job.exception(), KeyboardInterrupt)


def test_reading_layers_does_not_import_concurrent_futures() -> None:
    import subprocess
    import sys

    code = ("import sys; import imagelint.layers.reader, imagelint.layers.cache; "
            "print('concurrent.futures' in sys.modules, 'logging' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout.split()
    assert out == ["False", "False"]
