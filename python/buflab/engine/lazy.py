"""Submodules that load on first use: `import buflab` stays cheap (pandas and matplotlib take
most of a second), yet `buflab.analysis.queue.analyze(...)` works right after it, as the
README writes it, and `dir()` lists what there is.

Each package of buflab defines its module `__getattr__` and `__dir__` with these two.
Plain module handling: it must not import anything of buflab.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from types import ModuleType


def submodules(package: str) -> list[str]:
    """The names of the modules and packages directly inside `package`."""
    paths = getattr(sys.modules[package], "__path__", [])
    return sorted(
        info.name for info in pkgutil.iter_modules(paths) if not info.name.startswith("_")
    )


def submodule(package: str, name: str) -> ModuleType:
    """`package.name`, imported now if it is a submodule; AttributeError otherwise, as for
    any missing attribute."""
    if name in submodules(package):
        return importlib.import_module(f"{package}.{name}")
    raise AttributeError(f"module {package!r} has no attribute {name!r}")


def listing(package: str, names: dict[str, object]) -> list[str]:
    """What `dir(package)` shows: its own names and its submodules."""
    return sorted({*names, *submodules(package)})
