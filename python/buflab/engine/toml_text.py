"""A scenario tree written as TOML text: the file a live session downloads (its scenario and
its changes as `[[change]]` entries), which `buflab run` reads back to the same tree.

Python reads TOML (`tomllib`) but does not write it; scenario trees need little of it:
tables, arrays of tables, strings, numbers, booleans and arrays. A table's scalar keys come
first, then its sub-tables as `[a.b]` sections and its arrays of tables as `[[a.b]]` entries;
inside an array entry, tables are written inline. It must not know what a key means.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _value(value: Any) -> str:
    """A value on one line: scalars, arrays and inline tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as TOML")


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _table(lines: list[str], path: list[str], table: dict[str, Any]) -> None:
    """The scalar keys of `table`, then its sub-tables and arrays of tables."""
    for key, value in table.items():
        if not isinstance(value, dict) and not _is_table_array(value):
            lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in table.items():
        name = [*path, _key(key)]
        if isinstance(value, dict):
            lines.extend(["", f"[{'.'.join(name)}]"])
            _table(lines, name, value)
        elif _is_table_array(value):
            for entry in value:
                lines.extend(["", f"[[{'.'.join(name)}]]"])
                for k, v in entry.items():
                    lines.append(f"{_key(k)} = {_value(v)}")


def dumps(tree: dict[str, Any], header: str = "") -> str:
    """`tree` as TOML text, after `header` (comment lines, each starting with `#`)."""
    lines = [header.rstrip("\n")] if header else []
    _table(lines, [], tree)
    return "\n".join(lines).lstrip("\n") + "\n"
