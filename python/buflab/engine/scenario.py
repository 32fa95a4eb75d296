"""Loading scenarios and applying `KEY=VALUE` overrides.

A scenario is the plain tree a TOML file parses to. This module only reads it and edits it;
whether a key exists or a value makes sense is the engine's call (`buflab.validate`), so the
rules live in one place and the messages are the same from Python, the CLI and sweeps.

It stands on the engine's door alone (for `ScenarioError`) and must not know what any key
means, beyond the CDF files it reads in for `DISTRIBUTION_KEYS`.
"""

from __future__ import annotations

import csv
import datetime
import json
import os
import stat
import tomllib
from collections.abc import Iterable, Mapping
from typing import Any

from buflab.engine import MissingFile, ScenarioError, core, has_engine, key_segment

Scenario = dict[str, Any]
ScenarioSource = str | os.PathLike[str] | Mapping[str, Any]
Overrides = Mapping[str, Any] | Iterable[str] | None


def load_scenario(source: ScenarioSource, overrides: Overrides = None) -> Scenario:
    """Read a scenario from a TOML file path, TOML text or a dict, then apply overrides.

    A string is a path if a file of that name exists, and otherwise TOML text when it contains
    "=" or a newline (a scenario always does), so a path may contain "=". The result is a
    fresh dict: the caller's dict is never modified. A file that cannot be read as a TOML
    scenario (a directory, unreadable, not text, not TOML, nested without end) raises one
    ScenarioError naming it; a missing file raises MissingFile (a ScenarioError and a
    FileNotFoundError).
    """
    base = os.getcwd()
    if not isinstance(source, Mapping | str | os.PathLike):
        # An int would be read as a file descriptor: refuse what is not a scenario.
        raise ScenarioError(
            f"scenario: got {type(source).__name__} {source!r}; "
            "expected a path, TOML text or a dict"
        )
    if isinstance(source, Mapping):
        scenario = copy_tree(source)
    elif (
        isinstance(source, str) and not os.path.exists(source) and ("=" in source or "\n" in source)
    ):
        scenario = _parse_toml(source, "the scenario text")
    else:
        scenario = _read_toml_file(os.fspath(source))
        base = os.path.dirname(os.path.abspath(source))
    return read_cdf_files(apply_overrides(scenario, overrides, copy=False), base)


# Deeper than any scenario (they are six levels at most): a tree nested beyond this is refused
# before copying it, which would otherwise overflow Python's stack.
MAX_DEPTH = 64


def copy_tree(tree: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a scenario tree, its tables and arrays new and its values shared, or one
    ScenarioError naming the key where it nests more than `MAX_DEPTH` deep (a table that
    contains itself is as deep as it gets). One walk does both; recursing without a bound
    would overflow Python's stack."""

    def copy(node: Any, path: tuple[Any, ...]) -> Any:
        if isinstance(node, Mapping):
            if len(path) >= MAX_DEPTH:
                raise _too_deep(tree, path)
            return {key: copy(child, (*path, key)) for key, child in node.items()}
        if isinstance(node, list | tuple):
            if len(path) >= MAX_DEPTH:
                raise _too_deep(tree, path)
            return [copy(child, (*path, str(i))) for i, child in enumerate(node)]
        return node

    return copy(tree, ())


def _too_deep(tree: Any, path: tuple[Any, ...]) -> ScenarioError:
    if _revisits(tree, path):
        return ScenarioError("scenario: a table contains itself (a circular dict)")
    shown = ".".join(key_segment(str(key)) for key in path[:6])
    return ScenarioError(
        f"{shown}…: tables or arrays nested more than {MAX_DEPTH} deep; expected a "
        "scenario (six levels at most)"
    )


def _revisits(tree: Any, path: tuple[Any, ...]) -> bool:
    """Whether following `path` down from `tree` meets a table or array twice."""
    seen, node = {id(tree)}, tree
    for key in path:
        node = node[key] if isinstance(node, Mapping) else node[int(key)]
        if id(node) in seen:
            return True
        seen.add(id(node))
    return False


def _read_toml_file(path: str) -> dict[str, Any]:
    """The TOML file at `path`; MissingFile names a missing one."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except FileNotFoundError:
        raise MissingFile(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ScenarioError(f"{path}: a directory; expected a scenario file (TOML)") from None
    except PermissionError:
        raise ScenarioError(f"{path}: not readable (permission denied)") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError(f"{path}: not a text file; expected a scenario file (TOML)") from None
    return _parse_toml(text, path)


def _parse_toml(text: str, what: str) -> dict[str, Any]:
    """`text` parsed as TOML, or one ScenarioError saying where it is not. The engine's reader
    (Rust's, a hundred times faster on a file of 100,000 traffic entries) when it is built,
    Python's own otherwise."""
    if has_engine():
        try:
            return json.loads(core().toml_to_json(text))
        except ValueError as error:
            raise ScenarioError(f"{what}: invalid TOML: {error}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(f"{what}: invalid TOML: {error}") from None
    except RecursionError:
        raise ScenarioError(f"{what}: tables or arrays nested too deep to read") from None


# Keys of traffic entries whose value is a distribution table (see docs/scenario.md).
DISTRIBUTION_KEYS = ("file_size", "think")


def read_cdf_files(scenario: Scenario, base: str) -> Scenario:
    """Replace each empirical distribution's `file` by the `cdf` points it holds.

    The engine reads no files (a scenario it gets is self-contained), so the front end
    does it, with paths relative to the scenario file. Both keys at once are left for the
    engine to reject.
    """
    traffic = scenario.get("traffic")
    # Anything but an array of tables is the engine's to refuse, naming the key.
    for i, entry in enumerate(traffic if isinstance(traffic, list) else []):
        if not isinstance(entry, dict):
            continue
        for key in DISTRIBUTION_KEYS:
            dist = entry.get(key)
            if isinstance(dist, dict) and "file" in dist and "cdf" not in dist:
                path = os.path.join(base, str(dist["file"]))
                points = read_cdf_file(path, f"traffic.{i}.{key}.file")
                entry[key] = {k: v for k, v in dist.items() if k != "file"} | {"cdf": points}
    return scenario


# The largest CDF file read: a million points is far beyond any measured distribution.
MAX_CDF_FILE_BYTES = 50_000_000


def read_cdf_file(path: str, key: str) -> list[list[Any]]:
    """`value,probability` rows (a header row is skipped); values keep their units."""
    points: list[list[Any]] = []
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            # /dev/zero would be read without end.
            raise ValueError("not a regular file")
        if info.st_size > MAX_CDF_FILE_BYTES:
            raise ValueError(f"{info.st_size:,} bytes; expected at most {MAX_CDF_FILE_BYTES:,}")
        with open(path, newline="") as file:
            for n, row in enumerate(csv.reader(file), start=1):
                if not row or row[0].lstrip().startswith("#"):
                    continue
                if len(row) != 2:
                    raise ValueError(f"line {n}: expected two columns, value,probability")
                value, probability = (cell.strip() for cell in row)
                try:
                    points.append([_number_or_text(value), float(probability)])
                except ValueError:
                    if points:
                        why = f"line {n}: probability {probability!r} is not a number"
                        raise ValueError(why) from None
                    # A header row.
    except (OSError, ValueError) as e:
        shown = repr(path) if len(path) <= 80 else f"{path[:80]!r}… ({len(path)} characters)"
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise ScenarioError(f"{key}: cannot read {shown}: {why[:200]}") from None
    return points


def _number_or_text(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


def apply_overrides(scenario: Scenario, overrides: Overrides, *, copy: bool = True) -> Scenario:
    """Return `scenario` with overrides set, as a new tree that shares with `scenario` every
    table and array the overrides leave alone (only those on an override's path are copied:
    a deep copy of 100,000 traffic entries took seconds, and sweeps make one a point), so
    neither tree is to be changed in place afterwards; with `copy=False`, for a tree the
    caller has just made and owns, `scenario` itself with them set.

    `overrides` is either a mapping of dotted keys to Python values, used as they are, or
    an iterable of "KEY=VALUE" strings whose values are parsed with `parse_value`. In a
    mapping, the value None removes the key (TOML has no null, so None can only mean "not
    given"): `{"network.switch.speedup": None}` turns a CIOQ scenario output-queued.
    """
    result = dict(scenario) if copy else scenario
    if overrides is None:
        return result
    if isinstance(overrides, Mapping):
        pairs = list(overrides.items())
    elif isinstance(overrides, str):
        pairs = [parse_override(overrides)]
    elif isinstance(overrides, list | tuple) and all(isinstance(t, str) for t in overrides):
        pairs = [parse_override(text) for text in overrides]
    else:
        raise ScenarioError(
            f"overrides: got {_shown(overrides)}; expected a dict of dotted keys to values, "
            'or "KEY=VALUE" strings'
        )
    for key, _ in pairs:
        if not isinstance(key, str):
            raise ScenarioError(f"overrides: got the key {_shown(key)}; expected a dotted key")
    pairs = [(expand_shorthand(result, key), value) for key, value in pairs]
    owned = {id(result)} if copy else None
    for key, value in pairs:
        set_key(result, key, value, owned=owned)
    return result


# `flows` alone is short for the flows of a scenario's only traffic entry, the key varied
# most: `--set flows=400`, `--vary flows=10,100`, `overrides={"flows": 400}` alike.
SHORT_FLOWS_KEY = "flows"


def expand_shorthand(scenario: Scenario, key: str) -> str:
    """The full key a shorthand stands for in `scenario` (`flows` → `traffic.0.flows`), or
    `key` itself; a shorthand that is ambiguous (several traffic entries) is one error."""
    if key != SHORT_FLOWS_KEY:
        return key
    entries = scenario.get("traffic")
    if not isinstance(entries, list) or len(entries) != 1:
        count = len(entries) if isinstance(entries, list) else 0
        raise ScenarioError(
            f"{key}: short for the flows of the only [[traffic]] entry, but the scenario has "
            f"{count}; name one, e.g. traffic.0.flows"
        )
    return f"traffic.0.{SHORT_FLOWS_KEY}"


def _shown(value: Any) -> str:
    """A value as an error message shows it: its type, and its text cut to 60 characters."""
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'…' if len(text) > 60 else ''}"


def parse_override(text: str) -> tuple[str, Any]:
    """Split "network.bottleneck.buffer=50pkt" into the key and the parsed value."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ScenarioError(f"override {text!r}: expected KEY=VALUE, e.g. seed=2")
    return key, parse_value(value.strip())


def parse_value(text: str) -> Any:
    """A TOML value if the text is one (400, 0.5, true, "x", [1, 2], {rate = "1Gbps"}),
    else the text itself, so unit strings can be written without quotes (50pkt, 10Gbps)."""
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    # A bare date like 2024-01-01 is valid TOML but no scenario key is a date: keep the text.
    if isinstance(value, datetime.date | datetime.time):
        return text
    return value


def set_key(scenario: Scenario, key: str, value: Any, *, owned: set[int] | None = None) -> None:
    """Set a dotted key in place. A numeric segment indexes an array (traffic.0.flows).

    Missing tables on the way are created (the engine rejects unknown keys later, naming
    them); an index past the end of an array, or a path through a value that is not a table,
    is an error naming the key. The value None removes the key (nothing to remove is fine).
    With `owned` (the ids of the tables and arrays this tree owns, `scenario` among them),
    each table or array on the way that it does not own is first replaced by a copy of its
    own, so a tree sharing the rest with another changes only itself.
    """
    parts = key.split(".")
    if any(part == "" for part in parts):
        raise ScenarioError(f"override {key!r}: empty segment in the dotted key")
    node: Any = scenario
    for depth, part in enumerate(parts):
        here = ".".join(parts[: depth + 1])
        last = depth == len(parts) - 1
        if isinstance(node, list):
            index = _array_index(node, part, key, ".".join(parts[:depth]))
            if last and value is None:
                raise ScenarioError(
                    f"override {key!r}: None removes a key, but {key} is an entry of the "
                    f"array {'.'.join(parts[:depth])}, which cannot be removed"
                )
            if last:
                node[index] = value
            else:
                child = node[index] = _owned(node[index], owned)
                node = child
        elif isinstance(node, dict):
            if last and value is None:
                node.pop(part, None)
            elif last:
                node[part] = value
            elif value is None and part not in node:
                return  # nothing to remove, and no empty tables made on the way
            else:
                child = node.setdefault(part, {})
                if not isinstance(child, dict | list):
                    raise ScenarioError(
                        f"override {key!r}: {here} is {_describe(child)}, not a table, "
                        "so it has no keys to set"
                    )
                child = node[part] = _owned(child, owned)
                node = child
        else:  # unreachable: checked before descending
            raise AssertionError(here)


def _owned(node: Any, owned: set[int] | None) -> Any:
    """`node`, or a shallow copy of it recorded in `owned` when the tree does not own it."""
    if owned is None or id(node) in owned or not isinstance(node, dict | list):
        return node
    mine = dict(node) if isinstance(node, dict) else list(node)
    owned.add(id(mine))
    return mine


def _array_index(array: list[Any], part: str, key: str, array_key: str) -> int:
    if not part.isdigit():
        raise ScenarioError(
            f"override {key!r}: {array_key} is an array, so the next segment must be an "
            f"index (e.g. {array_key}.0), not {part!r}"
        )
    index = int(part)
    if index >= len(array):
        raise ScenarioError(
            f"override {key!r}: index {index} is out of range, {array_key} has "
            f"{len(array)} {'entry' if len(array) == 1 else 'entries'}"
        )
    return index


def _describe(value: Any) -> str:
    names = {str: "string", int: "integer", float: "number", bool: "boolean"}
    return f"the {names.get(type(value), type(value).__name__)} {value!r}"


# Overrides that do not make another scenario of it: the seed is a column of every result,
# and what is monitored changes no result.
_UNNAMED_KEYS = ("seed",)
_UNNAMED_SECTIONS = ("monitor.",)


def named_with(scenario: Scenario, settings: Iterable[str]) -> Scenario:
    """`scenario` (which the caller owns) with the settings it was given (`KEY=VALUE` texts,
    as the user wrote them) in its name: `dumbbell-100 (traffic.0.flows=400)`, so that
    results and figure footers say what was run rather than the file's name alone. Unless
    a setting names the scenario itself, or only the seed or what is monitored is set."""
    keys = [(text, text.partition("=")[0].strip()) for text in settings]
    shown = [
        text
        for text, key in keys
        if key not in _UNNAMED_KEYS and not key.startswith(_UNNAMED_SECTIONS)
    ]
    base = scenario.get("name", "scenario")
    if not shown or not isinstance(base, str):
        return scenario  # a name that is no string is the engine's to refuse
    if any(text.partition("=")[0].strip() == "name" for text in shown):
        return scenario
    scenario["name"] = f"{base} ({', '.join(shown)})"
    return scenario


def setting_texts(overrides: Overrides) -> list[str]:
    """Overrides as `KEY=VALUE` texts: strings as given, a mapping's values as TOML writes a
    plain value (strings bare, as on the command line)."""
    if overrides is None:
        return []
    if isinstance(overrides, str):
        return [overrides]
    if isinstance(overrides, Mapping):
        return [f"{key}={_setting_value(value)}" for key, value in overrides.items()]
    return [str(text) for text in overrides]


def _setting_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str)


def kwargs_overrides(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword names as dotted keys: network__bottleneck__rate -> network.bottleneck.rate."""
    return {name.replace("__", "."): value for name, value in kwargs.items()}


def get_key(scenario: Scenario, key: str, default: Any = None) -> Any:
    """Read a dotted key (numeric segments index arrays); `default` when absent."""
    node: Any = scenario
    for part in key.split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return default
    return node
