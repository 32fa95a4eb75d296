"""The one check every table of a recipe's header gets: a table, with only known keys.

`[[sweep.published]]`, `[sweep.threshold]`, `[sweep]` itself and the `[scale.*]` tables are
each read by their own code; a typo in any of them must name the key and the keys it could
have been, in one line, rather than be ignored.
"""

from __future__ import annotations

from typing import Any

from buflab.engine import ScenarioError


def known_keys(where: str, table: Any, allowed: set[str]) -> dict[str, Any]:
    """`table` itself when it is a table (a dict) whose keys are all in `allowed`; otherwise a
    ScenarioError naming `where` and what was expected."""
    if not isinstance(table, dict):
        raise ScenarioError(f"{where} = {table!r}: expected a table")
    unknown = set(table) - allowed
    if unknown:
        raise ScenarioError(
            f"{where}.{sorted(unknown)[0]}: unknown key; expected one of "
            f"{', '.join(sorted(allowed))}"
        )
    return table
