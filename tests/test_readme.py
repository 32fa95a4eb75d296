"""The README runs as written: every command and Python snippet of its code blocks, in order,
in a fresh working directory (newcomer issue: three of its snippets failed and a file it named
did not exist). The blocks are read from README.md itself, so the test cannot drift from it.

The fast suite runs the blocks that take seconds; `--slow` runs every block in order, the
long searches and the emulation (as root) included. Skipped, each for its reason: the set-up
and test commands (this suite is the second; the first is what made this `.venv`), the
benchmark (a measurement, not a check), the fuzzer (`test_fuzz.py` replays it) and
`buflab serve` (a server that runs until Ctrl-C; `test_serve*.py` drive it).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
# What the README's blocks run that this suite does not, and why.
NOT_RUN = {
    "bash scripts/setup": "this suite runs in the environment it set up",
    ".venv/bin/pip install": "installs the package's extras, which the set-up already did",
    "bash scripts/bench": "a benchmark: it measures speed, it checks nothing",
    "bash scripts/test": "the test suite itself",
    "cargo bench": "a benchmark: it measures speed, it checks nothing",
    "bash scripts/fuzz": "a million inputs; tests/test_fuzz.py replays its corpus",
    ".venv/bin/buflab serve": "a server, until Ctrl-C: tests/test_serve*.py drive it",
    ".venv/bin/buflab report --scale ci": "every recipe, minutes: tests/test_report.py runs it",
}
# What a README command needs that a test machine has not: skipped, saying so.
NEEDS = {
    "--cluster tcp://HOST": "a Dask scheduler at HOST",
    "--cluster slurm": "a Slurm cluster",
}
# Commands that take more than a few seconds on two cores: the slow suite runs them.
SLOW = re.compile(
    r"\b(sweep|size|autosize|reproduce|report|emulate|compare|run t7|analyze runs/t7|"
    r"cluster-estimate)\b"
)


@dataclass(frozen=True)
class Block:
    """One code block: its language, its text, and the line it starts on (for messages)."""

    language: str
    text: str
    line: int

    def commands(self) -> list[str]:
        """A shell block's commands: continued lines joined, comments and prompts removed
        (in a console block, only the `$ ` lines are commands; the rest is their output)."""
        joined = self.text.replace("\\\n", " ")
        lines = joined.splitlines()
        if self.language == "console":
            lines = [line[2:] for line in lines if line.startswith("$ ")]
        commands = []
        for line in lines:
            for part in line.split("&&"):
                words = shlex.split(part, comments=True)
                if words:
                    commands.append(shlex.join(words))
        return commands

    def expected_output(self) -> list[str]:
        """A console block's shown output lines (`…` stands for text left out)."""
        return [line for line in self.text.splitlines() if line and not line.startswith("$ ")]


def readme_blocks() -> list[Block]:
    text = (ROOT / "README.md").read_text()
    blocks = []
    for match in re.finditer(r"```(\w+)\n(.*?)```", text, re.S):
        if match.group(1) in ("sh", "console", "python"):
            line = text.count("\n", 0, match.start()) + 1
            blocks.append(Block(match.group(1), match.group(2), line))
    return blocks


def is_slow(block: Block) -> bool:
    return block.language != "python" and any(SLOW.search(c) for c in block.commands())


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh directory with the project's examples, as a clone has them."""
    work = tmp_path_factory.mktemp("readme")
    (work / "examples").symlink_to(ROOT / "examples")
    return work


def run_command(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A README command as a newcomer types it, with `.venv/bin/` this suite's own and
    `sudo` dropped (the suite runs as root where it runs them at all)."""
    words = shlex.split(command)
    if words[0] == "sudo":
        words = words[1:]
    if words[0].startswith(".venv/bin/"):
        words[0] = str(VENV_BIN / words[0].removeprefix(".venv/bin/"))
    if words[0] == "bash" and words[1].startswith("scripts/"):
        words[1] = str(ROOT / words[1])  # the project's scripts, run on its clone
    env = os.environ | {"MPLBACKEND": "Agg", "PATH": f"{VENV_BIN}:{os.environ['PATH']}"}
    return subprocess.run(words, cwd=cwd, env=env, capture_output=True, text=True, timeout=3600)


def check_block(block: Block, cwd: Path) -> None:
    if block.language == "python":
        env = os.environ | {"MPLBACKEND": "Agg"}
        # From standard input, as a newcomer pastes it (no `__main__` guard).
        done = subprocess.run(
            [sys.executable, "-"], input=block.text, cwd=cwd, env=env, capture_output=True,
            text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, f"README line {block.line}:\n{done.stderr}"
        return
    for command in block.commands():
        reason = next((why for start, why in NOT_RUN.items() if command.startswith(start)), None)
        if reason or any(needed in command for needed in NEEDS):
            continue
        if command.startswith("sudo") and os.geteuid() != 0:
            pytest.skip("the emulation commands need root")
        done = run_command(command, cwd)
        where = f"README line {block.line}: {command}\n{done.stdout[-2000:]}\n{done.stderr}"
        if block.language == "console" and block.expected_output():
            shown = block.expected_output()[0]
            prefix = shown.split("(…)")[0].rstrip()
            assert done.stderr.startswith(prefix) or done.stdout.startswith(prefix), where
            continue
        assert done.returncode == 0, where


BLOCKS = readme_blocks()


def test_the_readme_has_the_blocks_this_suite_reads() -> None:
    """The blocks are found (a change of fence style would otherwise skip them all); what is
    not run says why in NOT_RUN and NEEDS."""
    assert sum(block.language == "python" for block in BLOCKS) >= 1
    assert any("buflab run" in c for block in BLOCKS for c in block.commands())


def test_the_quick_blocks_run_in_order(workdir: Path) -> None:
    """Every block that takes seconds, in the README's order."""
    for block in BLOCKS:
        if not is_slow(block):
            check_block(block, workdir)


@pytest.mark.slow
def test_every_block_runs_in_order(tmp_path: Path) -> None:
    """All of it, as a newcomer would go through it (tens of minutes on two cores)."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    for block in BLOCKS:
        check_block(block, tmp_path)
