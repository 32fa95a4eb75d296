"""Writing a file so that no reader ever sees half of it: the content goes to a temporary
file beside it, renamed over the destination once complete (a rename within a directory is
atomic). A run killed mid-write leaves the old file, or none, never a truncated one.

Plain file handling: it must not know what the files hold.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def write_atomically(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Calls `write` with a temporary path beside `path`, then renames it to `path`; on any
    error (Ctrl-C included) the temporary file is removed and the error raised."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.partial")
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path
