"""The whole-run deadline: no ``imagelint`` run outlives ``--deadline`` seconds, whatever a remote sends.

``--timeout`` bounds each read (the gap between bytes), which a registry dripping one
byte a second never trips; this bounds the run. Code that waits on a remote party asks
``remaining()`` (a request's timeouts, a retry's sleep, a body read between chunks) and
stops with ``DeadlineExceeded`` (exit 3, one line naming the step). Anything that cannot
be asked (a DNS lookup, a library's own read) is covered by a watchdog: shortly after
the deadline it sends the main thread SIGALRM, whose handler raises ``DeadlineExceeded`` there
(a blocking system call is interrupted by the signal), so the run ends the ordinary way: the
exception unwinds, files are closed, exit 3 with one line. Only if the main thread still has not
ended a few seconds later (stuck inside C code that ignores signals) does the watchdog end the
process itself, the one exit that skips the unwinding.

Default 15 minutes (a CI step's usual budget); ``IMAGELINT_DEADLINE`` or ``--deadline``
change it; ``0`` turns it off.

``--timeout`` (per request) is kept here too, for the readers far from the source options
that must honour it (the cluster connection): ``request_timeout()``.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from types import FrameType

from imagelint.errors import EXIT_UNREADABLE, SourceError, UsageError
from imagelint.untrusted import parse_float

DEFAULT_DEADLINE = 900.0
MAX_DEADLINE = 1e6  # 11.6 days: past any CI job, well inside what a timer thread can wait

_lock = threading.Lock()
_started: float | None = None  # monotonic time the run began (the first start())
_seconds: float | None = None
_watchdog: threading.Timer | None = None
_request_timeout: float | None = None
_previous_alarm_handler: signal.Handlers | object | None = None  # restored by stop()
_BACKSTOP = 5.0  # seconds the main thread has to end after SIGALRM before the process is ended
_alarm_raised = threading.Event()  # the main thread was told (its run says so in its own line)


class DeadlineExceeded(SourceError):
    """The run reached ``--deadline`` while waiting on a registry, daemon, cluster or helper."""


def parse_deadline(text: str | float | None) -> float | None:
    """Seconds from a flag or ``IMAGELINT_DEADLINE``: None keeps the default, 0 means none."""
    if text is None or text == "":
        return DEFAULT_DEADLINE
    try:
        seconds = parse_float(str(text), "--deadline")
    except ValueError:
        raise UsageError(f"--deadline {text!r}: expected a number of seconds") from None
    if seconds < 0 or seconds != seconds:
        raise UsageError("--deadline must be 0 (none) or a positive number of seconds")
    if seconds > MAX_DEADLINE:  # a timer that long cannot be armed (OverflowError in its thread: no watchdog)
        raise UsageError(f"--deadline {text!r}: at most {MAX_DEADLINE:g} s (limit: --deadline; 0 turns it off)")
    return seconds or None


def start(seconds: float | None) -> None:
    """Set the run's deadline to ``seconds`` after the run began (None: no deadline)."""
    global _started, _seconds, _watchdog
    with _lock:
        now = time.monotonic()
        if _started is None:
            _started = now
        _seconds = seconds
        if _watchdog is not None:
            _watchdog.cancel()
            _watchdog = None
        if seconds is not None:
            left = _started + seconds - now
            _install_alarm_handler()
            _watchdog = threading.Timer(max(0.0, left) + _grace(seconds), _expire, args=(seconds,))
            _watchdog.daemon = True
            _watchdog.start()


def _install_alarm_handler() -> None:
    """SIGALRM raises DeadlineExceeded in the main thread (only the main thread may set handlers;
    elsewhere, or without SIGALRM, the watchdog's backstop is all there is)."""
    global _previous_alarm_handler
    if _previous_alarm_handler is not None or not hasattr(signal, "pthread_kill"):
        return
    if threading.current_thread() is not threading.main_thread():
        return
    _previous_alarm_handler = signal.signal(signal.SIGALRM, _on_alarm)


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    if _seconds is not None:  # a late signal after stop() is ignored
        _alarm_raised.set()
        raise DeadlineExceeded(message())


def set_request_timeout(seconds: float | None) -> None:
    """``--timeout`` as given: the bound of one request's connect and of each read."""
    global _request_timeout
    _request_timeout = seconds


def request_timeout(default: float) -> float:
    return _request_timeout if _request_timeout is not None else default


def stop() -> None:
    """The run is over (also between in-process runs, e.g. tests calling ``main()``)."""
    global _started, _seconds, _watchdog, _request_timeout, _previous_alarm_handler
    with _lock:
        if _watchdog is not None:
            _watchdog.cancel()
        _started = _seconds = _watchdog = _request_timeout = None
        if _previous_alarm_handler is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGALRM, _previous_alarm_handler)  # type: ignore[arg-type]  # what signal.signal returned
            _previous_alarm_handler = None


def remaining() -> float | None:
    """Seconds left before the deadline (may be <= 0), or None without one."""
    started, seconds = _started, _seconds
    if started is None or seconds is None:
        return None
    return started + seconds - time.monotonic()


def bounded(timeout: float) -> float:
    """``timeout`` cut to what is left of the run; DeadlineExceeded when nothing is."""
    left = remaining()
    if left is None:
        return timeout
    if left <= 0:
        raise DeadlineExceeded(message())
    return min(timeout, left)


def check(step: str) -> None:
    left = remaining()
    if left is not None and left <= 0:
        raise DeadlineExceeded(message(step))


def message(step: str | None = None) -> str:
    """The words for a run that reached its deadline (while ``step``)."""
    during = f" while {step}" if step else ""
    seconds = f" of {_seconds:g} s" if _seconds is not None else ""
    return f"the run reached its deadline{seconds}{during} (--deadline; 0 turns it off)"


def _grace(seconds: float) -> float:
    # Time for the cooperative path to report the step in its own words first.
    return min(5.0, max(0.5, seconds * 0.1))


def _expire(seconds: float) -> None:
    """The watchdog: end the run through the main thread; end the process only if that fails."""
    main = threading.main_thread()
    if _previous_alarm_handler is not None and main.ident is not None:
        signal.pthread_kill(main.ident, signal.SIGALRM)
        main.join(_BACKSTOP)
        if not main.is_alive():
            return  # the run ended the ordinary way (exit 3, its own one line)
        if _alarm_raised.is_set():
            # The run said why (its one line) and is waiting at exit for a worker stuck in a read:
            # end it with the same code, adding no second line.
            os._exit(EXIT_UNREADABLE)
    try:
        stderr = sys.__stderr__  # None when the interpreter started without one: then the exit alone
        if stderr is not None:
            stderr.write(f"imagelint: error: the run did not finish within its deadline of {seconds:g} s "
                         "(--deadline; 0 turns it off)\n")
            stderr.flush()
    finally:
        os._exit(EXIT_UNREADABLE)  # the main thread did not end: it is stuck where no signal reaches
