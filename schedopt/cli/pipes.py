"""A reader that stops early (``schedopt solve ... | head``) must not change the exit code.

When stdout's reader goes away, a write raises ``BrokenPipeError`` (Python ignores SIGPIPE).
:func:`guarded_stdout` catches it where it happens, points file descriptor 1 at ``/dev/null``
(as the Python documentation advises, so the interpreter's last flush cannot fail either) and
lets the command finish: it returns its own exit code, 0 or 4 say, with no traceback.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO

#: The exit code of a process killed by SIGPIPE (128 + 13), for a pipe that broke outside
#: stdout's writes (where the command's own code is unknown).
EXIT_BROKEN_PIPE = 141


class _Guarded:
    """``sys.stdout`` that drops what is written once its reader has gone."""

    def __init__(self, stream: TextIO):
        self._stream = stream
        self.broken = False

    def _silence(self) -> None:
        self.broken = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass  # not a real file (a test's capture): dropping the writes is enough

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._silence()
        return len(text)

    def flush(self) -> None:
        if not self.broken:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._silence()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded_stdout() -> Iterator[None]:
    """Run a command with stdout guarded against a reader that stops early."""
    original = sys.stdout
    guarded = _Guarded(original)
    sys.stdout = guarded
    try:
        yield
        guarded.flush()
    finally:
        if sys.stdout is guarded:
            sys.stdout = original
