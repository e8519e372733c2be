"""Reading a whole trace file with a cap on the bytes read, errors naming the file.

The cap is on bytes actually read (``schedopt.io.instance_json.read_capped``), so ``/dev/zero``
or a FIFO that never ends cannot hang a loader or fill memory.
"""

from __future__ import annotations

from pathlib import Path

from schedopt.core.errors import InvalidInstanceError
from schedopt.io.instance_json import decode_json, read_capped

#: Largest trace file read: Gavel's throughput file is 1.2 MB and its traces well under 1 MB.
MAX_TRACE_BYTES = 64 * 1024 * 1024


def trace_cap() -> int:
    """The byte cap of a trace file (read when called, so a test can lower it)."""
    return MAX_TRACE_BYTES


def read_bytes(path: Path) -> bytes:
    try:
        return read_capped(path, MAX_TRACE_BYTES)
    except InvalidInstanceError as err:
        raise InvalidInstanceError(path.name, err.reason) from None


def read_json(path: Path) -> object:
    data = read_bytes(path)
    try:
        return decode_json(data)
    except InvalidInstanceError as err:
        where = f"{path.name}:{err.path}" if err.path else path.name
        raise InvalidInstanceError(where, err.reason) from None
