"""What the commands share: the one-line `error: …` for bad input, the options several
commands take, reading FILE (a path or a shipped recipe's name) and the exit on Ctrl-C.

Bad input never ends in a traceback: scenario errors (from the engine or from --set),
TOML syntax errors, missing files and bad unit strings print one line, `error: …`, and
exit with status 2 (`Group`, `BadInput`). Ctrl-C during a sweep prints how many runs are kept
and exits with 130 (`exit_when_interrupted`); a command that does not catch Ctrl-C ends with
one line and 130 as well (`Group`). It must not know any one command.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from buflab.cli import EXIT_INTERRUPTED
from buflab.engine import Error, ScenarioError
from buflab.engine.scenario import apply_overrides, named_with, parse_value

EXIT_BAD_INPUT = 2


class BadInput(click.ClickException):
    """Printed as one line, `error: …`, exit status 2."""

    exit_code = EXIT_BAD_INPUT

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.message}", err=True)


# Exceptions that mean "the input is wrong" (or the machine cannot do what was asked), as
# opposed to a bug in buflab: every `buflab.Error`.
_BAD_INPUT = (Error,)


class Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _BAD_INPUT as error:
            raise BadInput(str(error)) from None
        except tomllib.TOMLDecodeError as error:
            raise BadInput(f"invalid TOML: {error}") from None
        except FileNotFoundError as error:
            raise BadInput(f"no such file: {error.filename}") from None
        except click.UsageError as error:
            # click's own (a missing argument, an option's bad value) would print the usage
            # and `Error: …`: the same one line as every other bad input instead.
            command = error.ctx.command_path if error.ctx is not None else "buflab"
            raise BadInput(f"{error.format_message()} (see `{command} --help`)") from None
        except KeyboardInterrupt:
            # A command that has nothing of its own to say (or was still importing what it
            # needs): one line and 130, where click would print "Aborted!" and exit with 1.
            click.echo("interrupted: the command was stopped", err=True)
            sys.exit(EXIT_INTERRUPTED)


def default_out(kind: str, file: str, *choices: Any) -> Path:
    """Where a command writes when --out is not given: `out/KIND-FILE`, and when the command
    line changes the scenario (--set, --vary, --point), `out/KIND-FILE-HASH`, a digest of
    those choices, so that two commands on one file with different settings never share a
    directory (the second used to be refused as "made from a different scenario")."""
    stem = Path(file).stem
    name = f"{kind}-{stem}" if kind else stem
    if any(choices):
        digest = hashlib.sha1(repr(choices).encode()).hexdigest()[:8]
        name = f"{name}-{digest}"
    return Path("out") / name


# A recipe's sizes (`buflab.experiments.recipes.scale.SCALES`, which imports pandas).
SCALES = ("ci", "small", "full")
scale_option = click.option(
    "--scale",
    type=click.Choice(SCALES),
    default="full",
    show_default=True,
    help="The recipe's size: full as written (the published setting), or its [scale.small] or "
    "[scale.ci] table, shorter runs and fewer points for a closer or a quick look.",
)


def scaled_name(name: str, scale: str) -> str:
    """A recipe's name in its default output directory: `t1`, `t1-small`, `t1-ci`, so that
    the scales never share a directory."""
    stem = Path(name).stem
    return stem if scale == "full" else f"{stem}-{scale}"


set_option = click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a scenario key, e.g. network.bottleneck.buffer=50pkt or traffic.0.flows=10 "
    "(repeatable).",
)
point_option = click.option(
    "--point",
    "points",
    multiple=True,
    metavar="NAME=VALUE",
    help="For a recipe (a file or a shipped name): one point of its sweep, a varied key's value "
    "or a case's name, e.g. --point access='200 Mb/s access' (repeatable; --set applies after).",
)


def check_out_dir(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """An `--out` directory, checked before anything runs: not a file, and writable where it
    would be created (a run must not finish only to fail on writing its results)."""
    if value is None:
        return None
    option = param.opts[0] if param.opts else "--out"  # --out, or report's --runs-in
    if value.exists() and not value.is_dir():
        raise BadInput(f"{option} {value}: a file is there; expected a directory")
    existing = value
    while not existing.exists():
        existing = existing.parent
    if not os.access(existing, os.W_OK | os.X_OK):
        raise BadInput(f"{option} {value}: cannot write in {existing}")
    return value


def vary_option(help: str) -> Any:
    """The `--vary KEY=V1,V2,...` option (repeatable), with the command's own help."""
    return click.option("--vary", "varies", multiple=True, metavar="KEY=V1,V2,...", help=help)


jobs_option = click.option(
    "--jobs", "-j", type=click.IntRange(min=1), help="Parallel runs [default: all cores]."
)
cluster_option = click.option(
    "--cluster",
    metavar="local|tcp://HOST:PORT|slurm",
    help="Run on Dask: `local` (a LocalCluster of --jobs workers on this machine), a "
    "scheduler's address, or `slurm` (workers as Slurm jobs, see --slurm) [default: this "
    "machine's process pool]. Needs pip install 'buflab[cluster]'.",
)
slurm_option = click.option(
    "--slurm",
    "slurm",
    multiple=True,
    metavar="KEY=VALUE",
    help="With --cluster slurm, a job setting: cores, memory, walltime, queue, account, jobs, "
    "processes, prologue, job_extra, interface, python, local_directory, log_directory "
    "(repeatable; e.g. --slurm cores=32 --slurm memory=64GB --slurm jobs=4).",
)
slurm_config_option = click.option(
    "--slurm-config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A TOML file whose [slurm] table holds the --slurm settings (--slurm overrides it).",
)


def cluster_options(function: Any) -> Any:
    """--cluster, --slurm and --slurm-config: where a command's runs go."""
    return cluster_option(slurm_option(slurm_config_option(function)))


@contextmanager
def runs_executor(
    cluster: str | None,
    jobs: int | None,
    slurm: tuple[str, ...] = (),
    slurm_config: Path | None = None,
) -> Iterator[Any]:
    """The executor a command's runs go to, opened before anything runs (an unreachable
    scheduler is one line, within seconds, with nothing started) and closed at the end. A
    cluster is announced on stderr with its dashboard."""
    # start-up time: the executors import pandas (through the sweep's tables) and Dask
    from buflab.experiments.backends import open_executor

    settings = slurm_settings(slurm, slurm_config)
    executor = open_executor(jobs, cluster, settings or None)
    try:
        if cluster is not None:
            click.echo(f"running on {executor.description}", err=True)
        yield executor
    finally:
        executor.close()


@contextmanager
def runs_or_emulations(
    emulated: bool,
    cluster: str | None,
    jobs: int | None,
    slurm: tuple[str, ...] = (),
    slurm_config: Path | None = None,
) -> Iterator[Any]:
    """`runs_executor`, or with --emulate this machine's emulator (one run at a time)."""
    if not emulated:
        with runs_executor(cluster, jobs, slurm, slurm_config) as executor:
            yield executor
        return
    # start-up time: the emulator only with --emulate
    from buflab.experiments.emulator import Emulator

    yield Emulator()


def refuse_with_emulate(jobs: int | None, cluster: str | None, slurm: bool) -> None:
    """--emulate runs one emulation at a time on this machine: options that spread runs
    elsewhere or over several processes are refused, one line each."""
    if jobs is not None and jobs > 1:
        raise BadInput(
            f"--jobs {jobs} with --emulate: emulations run one at a time (the datapath owns a "
            "core and each run takes its duration in real time)"
        )
    if cluster is not None or slurm:
        what = f"--cluster {cluster}" if cluster is not None else "--slurm"
        raise BadInput(f"{what} with --emulate: emulations run on this machine, one at a time")


def slurm_settings(given: tuple[str, ...], config: Path | None) -> dict[str, Any]:
    """The Slurm settings of --slurm-config's [slurm] table, then of each --slurm KEY=VALUE
    (as text: `buflab.experiments.cluster.slurm_settings` reads each as its setting's type)."""
    settings: dict[str, Any] = {}
    if config is not None:
        try:
            table = tomllib.loads(config.read_text())
        except FileNotFoundError:
            raise BadInput(f"--slurm-config {config}: no such file") from None
        except tomllib.TOMLDecodeError as error:
            raise BadInput(f"--slurm-config {config}: invalid TOML: {error}") from None
        section = table.get("slurm")
        if not isinstance(section, dict):
            raise BadInput(f"--slurm-config {config}: expected a [slurm] table")
        settings.update(section)
    for text in given:
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise BadInput(f"--slurm {text!r}: expected KEY=VALUE, e.g. cores=32")
        settings[key.strip()] = value.strip()
    return settings


runs_option = click.option(
    "--runs", "-r", type=click.IntRange(min=1), help="Seeds per point: seed, seed+1, …"
)


def scenario_of(
    file: str, overrides: tuple[str, ...], points: tuple[str, ...] = ()
) -> dict[str, Any]:
    """FILE's scenario (a path, or a shipped recipe's name) with overrides; a recipe's
    `[sweep]` header is left out, since it describes a sweep of the scenario, not the scenario
    (so `buflab run t1.toml` runs its base point and `buflab load t1.toml` reports that point's
    load), except for the `points` picked from it, applied before the overrides."""
    # start-up time: recipes plan sweeps, whose module imports pandas
    from buflab.experiments import recipes

    scenario, header = recipes.load(file)
    point = {}
    for text in points:
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise ScenarioError(f"--point {text!r}: expected NAME=VALUE, e.g. access=slow")
        point[name.strip()] = parse_value(value.strip())
    scenario = apply_overrides(scenario, header.point_overrides(point))
    # The name says what was run: "t7 (machines=4 machines, duration=80s)".
    return named_with(apply_overrides(scenario, list(overrides)), [*points, *overrides])


# The traffic kinds whose flows are TCP connections.
TCP_KINDS = ("long_lived", "closed_loop", "open_loop", "repeated_downloads")


def _one_rtt(spec: Any) -> str | None:
    """The RTT every flow of an entry gets, if they all get the same one (a single time, a
    constant distribution or a choice of one value); None if they differ."""
    if isinstance(spec, str):
        return None if ".." in spec else spec.strip()
    if isinstance(spec, dict):
        if spec.get("dist") == "constant":
            return str(spec.get("value"))
        values = spec.get("values")
        if spec.get("dist") == "choice" and isinstance(values, list) and len(set(values)) == 1:
            return str(values[0])
    return None


def phase_lock_note(normalized: dict[str, Any]) -> str | None:
    """A warning when several TCP flows all share one RTT and none has send jitter: flows
    that alike lock in phase at a drop-tail queue (the same flows lose at every overflow) and
    utilization jumps with the number of flows and the buffer (a 62.5 Mb/s star of 87-ms flows
    gave 92 % at 24 packets and 87 % at 48 with 100 flows, 99 % and more with RTTs of 80–94 ms
    or 1 ms of jitter); real hosts' timing noise breaks it."""
    # start-up time: units only when a scenario is checked
    from buflab.engine.units import parse_time

    entries = [t for t in normalized.get("traffic", []) if t.get("kind") in TCP_KINDS]
    flows = sum(int(t.get("flows", t.get("users", 2))) for t in entries)
    if flows < 2 or any(parse_time(str(t.get("jitter", "0s"))) > 0 for t in entries):
        return None
    rtts = {_one_rtt(t.get("rtt", normalized.get("network", {}).get("rtt"))) for t in entries}
    if len(rtts) != 1 or None in rtts:
        return None
    rtt = rtts.pop()
    return (
        f"every TCP flow's RTT is exactly {rtt} and no traffic entry has send jitter: flows "
        "this alike can lock in phase at a drop-tail queue, the same flows losing at every "
        "overflow, and results then jump with the number of flows and the buffer; real hosts' "
        "timing noise breaks it: give the entries `jitter` (e.g. 1ms) or the RTT a range"
    )


def emulate_option(help: str) -> Any:
    """The `--emulate` flag: the command's runs on real Linux TCP (`buflab emulate`)."""
    return click.option("--emulate", "emulated", is_flag=True, help=help)


@contextmanager
def emulation_notes(emulated: bool) -> Iterator[Callable[[], str]]:
    """Around a command's runs: with --emulate, root is required first (one line otherwise)
    and Ctrl-C ends with one line, the emulation's processes stopped and its namespaces
    removed, and status 130. Yields what names the runs' engine in the run store (the
    simulator, or Linux and its kernel release)."""
    # start-up time: the store imports pandas
    from buflab.experiments.store import SIMULATOR, linux_engine

    if not emulated:
        yield lambda: SIMULATOR
        return
    # start-up time: the emulator only with --emulate
    from buflab.engine.emulation.testbed import require_privileges

    require_privileges()
    try:
        yield linux_engine
    except KeyboardInterrupt:
        click.echo("interrupted: the emulation was stopped and its namespaces removed", err=True)
        sys.exit(EXIT_INTERRUPTED)


def fidelity_line(summary: dict[str, Any]) -> str:
    """How faithful an emulation's timing was, in one line (the figures `buflab emulate`
    prints as rows)."""
    # start-up time: units only when a line is printed
    from buflab.engine.units import format_percent, format_time

    within = format_percent(summary.get("late_within_10us", float("nan")))
    late = format_time(summary.get("generator_late_p99_s", float("nan")))
    verdict = (
        "faithful"
        if summary.get("faithful")
        else "not faithful: timing on this machine is noisy, read the numbers with that"
    )
    return (
        f"real TCP: {within} of frames left within 10 µs of their time, the traffic "
        f"generator's timers {late} late at p99; {verdict}"
    )


def _smallest_rtt(spec: Any) -> str | None:
    """The smallest RTT an entry's flows can get, when the spec is a time or a range of them."""
    if isinstance(spec, str):
        return spec.split("..")[0].strip()
    return _one_rtt(spec)


def jitter_note(normalized: dict[str, Any]) -> str | None:
    """A warning when a TCP entry's send jitter is a quarter of its smallest RTT or more: each
    segment leaves up to that late, so the flows see a longer round trip than the path's. The
    `linux` profile's 100 µs default stands for a WAN host; at a data centre's 100 µs RTT it
    doubles the round trip (DCTCP then needed K ≈ 20–30 packets for full rate on a 10 Gb/s
    port instead of the 12 that C·RTT/7 gives, which it reaches with 10 µs)."""
    # start-up time: units only when a scenario is checked
    from buflab.engine.units import parse_time

    for i, t in enumerate(normalized.get("traffic", [])):
        if t.get("kind") not in TCP_KINDS:
            continue
        jitter = str(t.get("jitter", "0s"))
        rtt = _smallest_rtt(t.get("rtt", normalized.get("network", {}).get("rtt")))
        if rtt is None or parse_time(jitter) * 4 < parse_time(rtt):
            continue
        return (
            f"traffic.{i}.jitter = {jitter} is a quarter or more of its smallest RTT ({rtt}): "
            "each segment leaves up to that late, so the flows see a longer round trip than "
            "the path's; for data-centre paths give a host's jitter there (e.g. 10us)"
        )
    return None


def timing_notes(normalized: dict[str, Any]) -> list[str]:
    """The notes on the model's send timing a scenario earns (`phase_lock_note`,
    `jitter_note`), for a command to print before its runs."""
    notes = (phase_lock_note(normalized), jitter_note(normalized))
    return [note for note in notes if note]


@contextmanager
def exit_when_interrupted() -> Iterator[None]:
    """Ctrl-C in a sweep: one line saying what was kept, exit status 130."""
    # start-up time: the sweep module imports pandas
    from buflab.experiments.sweep import SweepInterrupted

    try:
        yield
    except SweepInterrupted as stop:
        click.echo(str(stop), err=True)
        sys.exit(EXIT_INTERRUPTED)
