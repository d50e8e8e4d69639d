"""Terminal output shared by the commands: warnings, live progress, and a console for tables.

Progress: on a terminal a rich bar redrawn several times a second (rate and ETA computed from this
run's own work, so they read after the first batch, not after rich's 30-s speed window); when
stdout is not a terminal (a log file, CI), plain lines, one every ``FRAMEBENCH_PROGRESS_INTERVAL``
seconds (default 30) and one at the end, never cut to 80 columns.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, TextIO

PROGRESS_INTERVAL_ENV = "FRAMEBENCH_PROGRESS_INTERVAL"
DEFAULT_INTERVAL = 30.0
WIDE = 200  # columns for rich output when stdout is not a terminal


def is_terminal(stream: TextIO | None = None) -> bool:
    stream = stream or sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def warn(message: str) -> None:
    """One ``warning: ...`` line on stderr."""
    print(f"warning: {message}", file=sys.stderr, flush=True)


def console():
    """A rich console that does not cut lines at 80 columns when writing to a file or pipe."""
    from rich.console import Console

    return Console() if is_terminal() else Console(width=WIDE, no_color=True)


def clock(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _interval() -> float:
    try:
        return max(0.0, float(os.environ.get(PROGRESS_INTERVAL_ENV, DEFAULT_INTERVAL)))
    except ValueError:
        return DEFAULT_INTERVAL


class ProgressReporter:
    """Counts finished units against a total; shows done/total, rate, elapsed, ETA and fields.

    ``advance(n, **fields)`` after every batch (or planner decision); ``update(**fields)`` to change
    the extra fields alone (e.g. a decision counter). Units served from a store at the start are
    passed as ``completed`` and do not count toward the rate.
    """

    def __init__(self, description: str, total: int, *, completed: int = 0, unit: str = "items",
                 enabled: bool = True, interval: float | None = None, stream: TextIO | None = None,
                 fields: dict[str, Any] | None = None, terminal: bool | None = None):
        self.description, self.total, self.unit = description, total, unit
        self.completed = self.initial = completed
        self.fields = dict(fields or {})
        self.enabled = enabled
        self.stream = stream or sys.stdout
        self.terminal = is_terminal(self.stream) if terminal is None else terminal
        self.interval = _interval() if interval is None else interval
        self.lines_printed = 0
        self._start = time.monotonic()
        self._last_line = float("-inf")
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._bar = None

    # ---- numbers ---------------------------------------------------------------------------
    def elapsed(self) -> float:
        return time.monotonic() - self._start

    def rate(self) -> float | None:
        done, elapsed = self.completed - self.initial, self.elapsed()
        return done / elapsed if done > 0 and elapsed > 0 else None

    def eta(self) -> float | None:
        rate = self.rate()
        return (self.total - self.completed) / rate if rate else None

    def status(self) -> str:
        """``120/540 (22.2%) | 3.41 items/s | 0:35 elapsed | ETA 2:03 | <fields>``."""
        share = f" ({100 * self.completed / self.total:.1f}%)" if self.total else ""
        rate = self.rate()
        parts = [f"{self.completed}/{self.total}{share}",
                 f"{rate:.2f} {self.unit}/s" if rate else f"-- {self.unit}/s",
                 f"{clock(self.elapsed())} elapsed", f"ETA {clock(self.eta())}"]
        parts += [f"{name} {value}" for name, value in self.fields.items()]
        return " | ".join(parts)

    def line(self) -> str:
        return f"{self.description}: {self.status()}"

    # ---- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> ProgressReporter:
        self._start = time.monotonic()
        if not self.enabled:
            return self
        if self.terminal:
            self._start_bar()
        else:
            self._print_line()
            if self.interval > 0:
                self._thread = threading.Thread(target=self._periodic, daemon=True)
                self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.enabled:
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._bar is not None:
            self._bar.stop()
        else:
            self._print_line()

    def advance(self, n: int = 1, **fields: Any) -> None:
        with self._lock:
            self.completed += n
            self.fields.update(fields)
        self._changed()

    def skip(self, n: int) -> None:
        """``n`` units served without work (from a store): done, but not part of the rate."""
        with self._lock:
            self.completed += n
            self.initial += n
        self._changed()

    def update(self, **fields: Any) -> None:
        with self._lock:
            self.fields.update(fields)
        self._changed()

    # ---- output ----------------------------------------------------------------------------
    def _changed(self) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, completed=self.completed)
        elif time.monotonic() - self._last_line >= self.interval:
            self._print_line()

    def _print_line(self) -> None:
        with self._lock:
            self._last_line = time.monotonic()
            print(self.line(), file=self.stream, flush=True)
            self.lines_printed += 1

    def _periodic(self) -> None:
        while not self._stop.wait(self.interval):
            if time.monotonic() - self._last_line >= self.interval:
                self._print_line()

    def _start_bar(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, ProgressColumn, TextColumn
        from rich.text import Text

        reporter = self

        class StatusColumn(ProgressColumn):
            def render(self, task):  # redrawn by rich several times a second
                return Text(reporter.status())

        self._bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), StatusColumn(),
                             console=Console(file=self.stream))
        self._bar.start()
        self._task = self._bar.add_task(self.description, total=self.total, completed=self.completed)
