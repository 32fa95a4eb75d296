"""Scenario fuzzing: generated inputs through the validator, each of which must get one of two
answers — valid, or one `ScenarioError` line that names a key — and never a traceback, a
panic, a hang or a message of many lines.

Run by `bash scripts/fuzz` (a million cases by default; `--cases`, `--jobs`, `--seed`), and a
few thousand at a time by the test suite (`tests/test_fuzz.py`). The inputs:

- **Structure-aware**: a valid scenario (one of the shipped examples) with a key of the
  engine's own schema (`_core.schema()`, each key placed where its section lives) set to a
  value drawn for its type — a well-formed one, a boundary, or one of the wrong type.
- **Mutations** of the examples' trees: keys deleted, misspelt or added, values swapped for
  values of other types (bytes, sets, numpy numbers, huge and negative numbers, nested
  tables), tables nested deep, traffic lists emptied or turned into numbers.
- **Text mutations**: the examples' TOML with characters inserted, deleted or replaced.

The corpus (`validation/fuzz_corpus.jsonl`) holds the inputs that once failed (from the
hardening issue's report and from this tool's own findings), replayed first on every run;
a failure found is printed with its input and a line to add it to the corpus.

Every case is derived from (seed, case number) alone, so a failure is reproduced with
`--seed S --from K --cases 1`.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import multiprocessing
import random
import re
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).resolve().parent / "fuzz_corpus.jsonl"
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))

# A message names a key when it starts with a dotted key path (an index, `[]`, a quoted key
# allowed) followed by a colon or " =": `traffic.0.flows: got …`, `network."rate ": …`; a
# text or file that is no TOML is named as such (`the scenario text: invalid TOML …`).
_SEGMENT = r'(?:"(?:[^"\\]|\\.)*"(?:… \(\d+ characters\))?|[\w\[\]{},-]+)'
KEY_FIRST = re.compile(
    rf"^(?:scenario|overrides|the scenario text|/\S*|{_SEGMENT}(?:\.{_SEGMENT})*)(?::| =| \(|…)"
)
# The longest one-line message accepted: values are cut to 60 characters in messages.
MAX_MESSAGE = 600


def examples() -> list[dict[str, Any]]:
    return [tomllib.loads(path.read_text()) for path in EXAMPLES]


def example_texts() -> list[str]:
    return [path.read_text() for path in EXAMPLES]


# --- values ---------------------------------------------------------------------------------

WELL_FORMED = {
    "rate": ["10Mbps", "1Gbps", "2.5Gbps", "100kbps", "1bps", "999Tbps"],
    "time": ["1s", "100ms", "0s", "20us", "1ns", "3.5s", "1000000s"],
    "size": ["1500B", "80KB", "1MB", "1B", "64KiB"],
    "buffer": ["100pkt", "1pkt", "0pkt", "30000B", "unlimited"],
    "buffer in packets": ["100pkt", "0pkt"],
    "integer": [0, 1, 2, 7, 100, 2**31, 10**7],
    "number": [0, 0.5, 1, 1.5, 1e-9, 1e9],
    "number (packets)": [0, 5, 15.5],
    "boolean": [True, False],
    "time range": ["75ms..125ms", "0s..5s", "1s..1s"],
    "size or time range": ["1KB..100KB", "1s..2s"],
}
# Values of every type, for keys of any type: most are wrong somewhere.
ANY_VALUES: list[Any] = [
    0, -1, 1, 3.5, -2.5, 2**63, -(2**63) - 1, 10**30, 1e308, float("nan"), float("inf"),
    True, False, "", " ", "x", "abc", "10", "-5pkt", "1e9Gbps", "100 Mbps", "10Mbps",
    "5parsecs", "∞", "a" * 5000, "..", "1s..", "..1s", "1s..0s", "NaN", "0x10", "1_000",
    [], [1], ["a", 2], [[]], [{"a": 1}], {}, {"a": 1}, {"dist": "pareto"},
    {"dist": "empirical", "cdf": [[1, 0.5], [0, 1]]}, {"dist": "nope"},
]  # fmt: skip


def value_for(kind: str, rng: random.Random) -> Any:
    """A value for a key of schema type `kind`: well formed half the time."""
    if rng.random() < 0.5 and kind in WELL_FORMED:
        return rng.choice(WELL_FORMED[kind])
    return odd_value(rng)


def odd_value(rng: random.Random) -> Any:
    """A value of a random type, now and then an object JSON and TOML cannot hold."""
    r = rng.random()
    if r < 0.03:
        return rng.choice([b"bytes", {1, 2}, object(), Path("/x"), (1, 2)])
    if r < 0.06:
        try:
            import numpy as np

            return rng.choice([np.int64(7), np.float64(0.5), np.bool_(True), np.array([1, 2])])
        except ImportError:
            return 7
    if r < 0.08:
        return nested(rng.randint(50, 3000))
    return copy.deepcopy(rng.choice(ANY_VALUES))


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


# --- where a schema key lives -----------------------------------------------------------------


def placements(schema: list[dict[str, str]]) -> list[tuple[list[Any], str, str]]:
    """(path to the table that holds it, key, type) for every schema key; `None` in a path
    stands for "some entry of this array"."""
    where: dict[str, list[Any]] = {
        "": [],
        "network": ["network"],
        "monitor": ["monitor"],
        "autosize": ["autosize"],
        "emulation": ["emulation"],
        "network.bottleneck": ["network", "bottleneck"],
        "network.access": ["network", "access"],
        "network.cross": ["network", "cross"],
        "network.switch": ["network", "switch"],
        "network.hop": ["network", "hop", None],
        "network.bump": ["network", "bump", None],
        "network.bump.vqueue": ["network", "bump", None, "vqueue"],
        "network.bump.congestion_point": ["network", "bump", None, "congestion_point"],
        "network.bump.reaction_point": ["network", "bump", None, "reaction_point"],
        "distribution": ["traffic", None, "file_size"],
    }
    out = []
    for key in schema:
        section = key["section"]
        path = where.get(section, ["traffic", None] if section.startswith("traffic") else None)
        if path is not None:
            out.append(
                (path, key["key"].split(".")[-1].removeprefix("traffic[].")[:60], key["type"])
            )
    return out


def table_at(tree: dict[str, Any], path: list[Any], rng: random.Random) -> dict[str, Any] | None:
    """The table at `path` in `tree`, created where missing (an array gets one entry)."""
    node: Any = tree
    for step in path:
        if step is None:
            if not isinstance(node, list) or not node:
                return None
            node = rng.choice(node)
        elif isinstance(node, dict):
            if step not in node:
                node[step] = [{}] if step in ("hop", "bump", "traffic") else {}
            node = node[step]
        else:
            return None
    return node if isinstance(node, dict) else None


# --- cases ----------------------------------------------------------------------------------


def case(seed: int, n: int, trees: list[dict[str, Any]], texts: list[str], places: list) -> Any:
    """Case number `n` of run `seed`: a scenario tree or TOML text."""
    rng = random.Random(f"{seed}:{n}")
    r = rng.random()
    if r < 0.15:
        return mutate_text(rng.choice(texts), rng)
    tree = copy.deepcopy(rng.choice(trees))
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        if rng.random() < 0.55:
            path, key, kind = rng.choice(places)
            table = table_at(tree, path, rng)
            if table is not None:
                table[key] = value_for(kind, rng)
        else:
            mutate_tree(tree, rng)
    return tree


def mutate_text(text: str, rng: random.Random) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(chars) + 1)
        op = rng.random()
        if op < 0.4 and at < len(chars):
            del chars[at]
        elif op < 0.7:
            chars.insert(at, rng.choice("=[]{}\"',.#\n 0123456789abcxyz\\\x00é"))
        elif at < len(chars):
            chars[at] = rng.choice('=[]{}"., \n0z')
    return "".join(chars)


def tables_in(tree: Any, found: list[dict[str, Any]], depth: int = 0) -> list[dict[str, Any]]:
    """The tables in `tree`, to 20 levels down (a deeply nested value is one to the tool)."""
    if depth > 20:
        return found
    if isinstance(tree, dict):
        found.append(tree)
        for v in tree.values():
            tables_in(v, found, depth + 1)
    elif isinstance(tree, list):
        for v in tree:
            tables_in(v, found, depth + 1)
    return found


def mutate_tree(tree: dict[str, Any], rng: random.Random) -> None:
    tables = [t for t in tables_in(tree, []) if t]
    if not tables:
        tree["x"] = odd_value(rng)
        return
    table = rng.choice(tables)
    key = rng.choice(list(table))
    op = rng.random()
    if op < 0.25:
        del table[key]
    elif op < 0.45:
        # A misspelling: a letter dropped, doubled or swapped.
        if key:
            i = rng.randrange(len(key))
            drop = rng.random() < 0.5
            typo = key[:i] + key[i + 1 :] if drop else key[:i] + key[i] + key[i:]
            table[typo or "k"] = table.pop(key)
    elif op < 0.55:
        table[rng.choice(["flow", "rate ", "Rate", "bufer", "x", "", "traffic"])] = odd_value(rng)
    elif op < 0.65 and key == "traffic":
        table[key] = rng.choice([[], 1, "x", {}, [1], [{}], table[key] * 3])
    else:
        table[key] = odd_value(rng)


# --- checking -------------------------------------------------------------------------------


def check(source: Any) -> str | None:
    """None when the validator gave one of the two allowed answers, else what went wrong."""
    import buflab

    try:
        buflab.validate(source)
    except buflab.ScenarioError as error:
        message = str(error)
        if "\n" in message:
            return f"a message of several lines: {message[:300]!r}"
        if len(message) > MAX_MESSAGE:
            return f"a message of {len(message):,} characters: {message[:200]!r}…"
        if not KEY_FIRST.match(message) and not message.startswith("scenario"):
            return f"a message that names no key first: {message[:300]!r}"
        return None
    except RecursionError:
        return "RecursionError"
    except BaseException as error:  # noqa: BLE001 - any other exception is the finding
        if isinstance(error, KeyboardInterrupt):
            raise
        return f"{type(error).__name__}: {str(error)[:300]}"
    return None


def shown(source: Any) -> str:
    """An input as one JSON line for the corpus (objects JSON cannot hold as their repr;
    tables nested too deep for JSON as a note saying so)."""
    try:
        return json.dumps(source, default=repr, allow_nan=True)[:20000]
    except (RecursionError, ValueError):
        return json.dumps("(nested too deep to show)")


def corpus() -> Iterator[Any]:
    if not CORPUS.exists():
        return
    for line in CORPUS.read_text().splitlines():
        if line.strip() and not line.startswith("//"):
            entry = json.loads(line)
            yield entry["input"]


def _work(task: tuple[int, int, int]) -> tuple[int, list[tuple[int, str, str]]]:
    seed, start, count = task
    trees, texts = examples(), example_texts()
    from buflab.engine import core

    places = placements(core().schema())
    failures = []
    for n in range(start, start + count):
        source = case(seed, n, trees, texts, places)
        problem = check(source)
        if problem is not None:
            failures.append((n, problem, shown(source)))
    return count, failures


def run(cases: int, jobs: int, seed: int, start: int = 0) -> list[tuple[int, str, str]]:
    """Checks the corpus, then `cases` generated cases from number `start`; returns the
    failures (case number, what went wrong, the input)."""
    failures: list[tuple[int, str, str]] = []
    for i, source in enumerate(corpus()):
        problem = check(source)
        if problem is not None:
            failures.append((-1 - i, problem, shown(source)))
    chunk = 5_000
    tasks = [(seed, s, min(chunk, start + cases - s)) for s in range(start, start + cases, chunk)]
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            failures += _work(task)[1]
        return failures
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        done = 0
        for count, found in pool.imap_unordered(_work, tasks):
            done += count
            failures += found
            print(
                f"\r{done:,} of {cases:,} cases, {len(failures)} failures", end="", file=sys.stderr
            )
    print(file=sys.stderr)
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bash scripts/fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cases", type=int, default=1_000_000, help="generated cases (default 1,000,000)"
    )
    parser.add_argument("--jobs", type=int, default=multiprocessing.cpu_count(), help="processes")
    parser.add_argument("--seed", type=int, default=1, help="the run's seed (cases derive from it)")
    parser.add_argument("--from", dest="start", type=int, default=0, help="first case number")
    args = parser.parse_args(argv)
    if args.cases < 0 or args.jobs < 1:
        parser.error("--cases must be at least 0 and --jobs at least 1")
    began = time.monotonic()
    failures = run(args.cases, args.jobs, args.seed, args.start)
    took = time.monotonic() - began
    rate = args.cases / took if took > 0 else math.inf
    print(f"{args.cases:,} generated cases and the corpus in {took:,.1f} s ({rate:,.0f} a second), "
          f"{len(failures)} failures")  # fmt: skip
    for n, problem, source in failures[:20]:
        where = "corpus entry" if n < 0 else f"case {n} (--seed {args.seed} --from {n} --cases 1)"
        print(f"- {where}: {problem}\n  input: {source[:500]}")
        print(
            f"  to keep it: {json.dumps({'why': problem[:100], 'input': json.loads(source)})[:300]}"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
