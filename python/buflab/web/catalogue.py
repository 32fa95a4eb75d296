"""What the page may load: the scenario file given to `buflab serve`, the shipped examples
and the recipes (each recipe's scenario without its `[sweep]` header, the values its file
sets), by id. The page only ever names an id from this list, so no path from a browser
reaches the file system. It must not run anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from buflab.engine.scenario import Scenario, copy_tree, load_scenario
from buflab.experiments import recipes

EXAMPLES = Path(__file__).resolve().parent.parent.parent.parent / "examples"


@dataclass(frozen=True)
class Entry:
    """One scenario the page may load."""

    id: str
    label: str
    tree: Scenario


def _described(tree: Scenario, fallback: str) -> str:
    return str(tree.get("name") or fallback)


def catalogue(given: Path | None) -> dict[str, Entry]:
    """The entries by id, the given file first: `file`, then `example:NAME` for each
    shipped example, then `recipe:NAME` for each recipe."""
    entries: dict[str, Entry] = {}
    if given is not None:
        tree = load_scenario(given)
        entries["file"] = Entry("file", f"{given.name} (given)", tree)
    if EXAMPLES.is_dir():
        for path in sorted(EXAMPLES.glob("*.toml")):
            tree = load_scenario(path)
            entries[f"example:{path.stem}"] = Entry(
                f"example:{path.stem}", f"example {path.name}: {_described(tree, path.stem)}", tree
            )
    for name in recipes.names():
        tree, _ = recipes.load(name)
        entries[f"recipe:{name}"] = Entry(
            f"recipe:{name}", f"recipe {name}: {recipes.describe(name)}", tree
        )
    return entries


def listing(entries: dict[str, Entry]) -> list[dict[str, Any]]:
    """The pick list the page shows: id and label of each entry, in order."""
    return [{"id": e.id, "label": e.label} for e in entries.values()]


def tree_of(entries: dict[str, Entry], entry_id: Any) -> Scenario | None:
    """A copy of the scenario of entry `entry_id`, or None for an id not in the list."""
    entry = entries.get(entry_id) if isinstance(entry_id, str) else None
    return copy_tree(entry.tree) if entry is not None else None
