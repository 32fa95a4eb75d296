"""Memory a run will need, estimated before it starts, so that a scenario that would exhaust
the machine is refused with the key to change instead of dying by SIGABRT mid-run.

Read first: nothing. The figures are measured, not derived: a long-lived TCP flow costs the
engine about 1.8 KB (peak memory of the dumbbell example at 10,000 and 100,000 flows: 132 and
292 MiB) and its row of the results about 1 KB more; we count 3 KB a flow, and refuse what
would take more than the memory the machine has available now.
"""

from __future__ import annotations

import os
from typing import Any

from buflab.engine import ScenarioError, core, scenario_json
from buflab.engine.units import parse_bytes, parse_rate, parse_time

BYTES_PER_FLOW = 3 * 1024


# The memory a run may count on, when set (e.g. "64GiB"): for a machine whose swap or
# overcommit the user trusts, or a run known to need less than the estimate.
OVERRIDE = "BUFLAB_MEMORY"


def available_bytes() -> int | None:
    """The memory a run may use: `BUFLAB_MEMORY` if set, else MemAvailable from
    /proc/meminfo (None where there is none)."""
    if os.environ.get(OVERRIDE):
        text = os.environ[OVERRIDE]
        try:
            return int(parse_bytes(text))
        except ValueError:
            raise ScenarioError(
                f"{OVERRIDE}: got {text!r}; expected a size such as 64GiB"
            ) from None
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def flows_of(entry: dict[str, Any]) -> int:
    """The flows (or users, or sources) one traffic entry makes, as validated."""
    for key in ("flows", "users"):
        if isinstance(entry.get(key), int):
            return int(entry[key])
    return 1


def check_memory(normalized: dict[str, Any], available: int | None = None) -> None:
    """Refuses a scenario whose flows would need more memory than is available, naming the
    largest traffic entry's key. An open-loop entry counts every flow that will arrive in the
    run (each keeps its row), at the rate the engine computes for it."""
    available = available_bytes() if available is None else available
    traffic = normalized.get("traffic") or []
    if available is None or not traffic:
        return
    counts = [flows_of(entry) for entry in traffic]
    if any(entry.get("kind") == "open_loop" for entry in traffic):
        facts = core().traffic_facts(scenario_json(normalized))["entries"]
        run_s = parse_time(normalized["duration"])
        for i, (entry, fact) in enumerate(zip(traffic, facts, strict=True)):
            if entry.get("kind") == "open_loop":
                active_s = max(0.0, run_s - parse_time(entry.get("start", "0s")))
                counts[i] = int(fact["arrivals_per_s"] * active_s)
    need = sum(counts) * BYTES_PER_FLOW
    if need <= available:
        return
    i = max(range(len(counts)), key=counts.__getitem__)
    entry = traffic[i]
    key = next(k for k in ("flows", "users", "arrivals", "load") if k in entry)
    got = entry[key] if key in ("arrivals", "load") else counts[i]
    got = int(got) if float(got).is_integer() else got
    what = f"{counts[i]:,} flows arriving in the run; " if key in ("arrivals", "load") else ""
    raise ScenarioError(
        f"traffic.{i}.{key}: got {got:,}; expected fewer: {what}{sum(counts):,} flows need about "
        f"{need / 2**30:.1f} GiB, and this machine has {available / 2**30:.1f} GiB available "
        f"(set {OVERRIDE}, e.g. {OVERRIDE}=64GiB, to allow a run more)"
    )


def check_growth(normalized: dict[str, Any]) -> None:
    """Refuses an open-loop source faster than its own access link when that link's buffer
    is unlimited: its packets would pile up there without bound for the whole run (a source
    at 1 Tb/s once exhausted the machine)."""
    access = (normalized.get("network") or {}).get("access") or {}
    if access.get("buffer") != "unlimited" or "rate" not in access:
        return
    line = parse_rate(access["rate"])
    traffic = normalized.get("traffic") or []
    if not any(entry.get("kind") in ("udp_poisson", "udp_cbr") for entry in traffic):
        return
    # A source's rate as the engine set it (`load` and a `matrix` set them per source).
    facts = core().traffic_facts(scenario_json(normalized))["entries"]
    for i, (entry, fact) in enumerate(zip(traffic, facts, strict=True)):
        if entry.get("kind") in ("udp_poisson", "udp_cbr") and fact["max_rate_bps"] > line:
            key = "rate" if "rate" in entry else "load"
            raise ScenarioError(
                f"traffic.{i}.{key}: got {entry[key]!r}; expected at most the access rate "
                f"({access['rate']}) for every source: faster, its packets pile up without bound "
                "in the unlimited access buffer (or give network.access.buffer a limit)"
            )
