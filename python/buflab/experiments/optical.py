"""Recipe F8 (thesis ch. 6, Thm 6.1 and 6.2): the optical FIFO's construction counted against
the theorems, and request sequences through it and through an electronic FIFO of N − 1
packets side by side; and the slots of a few requests shown for a student.

The model runs in the engine (`_core.optical_layout`, `optical_check`, `optical_walk`); this
module chooses the sizes, trade-offs, patterns and loads of the tables and returns them as
DataFrames (and the walk as text); printing is the command line's.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pandas as pd

from buflab.engine import Error, core

# The range: N = 4 … 1,024.
N_SIZES = tuple(1 << i for i in range(2, 11))
# Bernoulli loads (arrivals per departure request), departures requested in half the slots.
LOADS = (0.5, 0.75, 0.9, 1.0)
DEPARTURE_P = 0.5
# N − 1 packets: the largest N the model builds (the engine's `MAX_N`, 2^20).
MAX_N = 1 << 20
# A check of 10^9 slots takes about two minutes; longer ones are refused.
MAX_SLOTS = 10**9


class OpticalInputError(Error, ValueError):
    """N, K or a request the construction cannot take; the message is one line."""


def power_of_two(value: int, name: str, low: int, high: int) -> int:
    """`value` if it is a power of two in [low, high], else an OpticalInputError naming it."""
    if value < low or value > high or value & (value - 1):
        raise OpticalInputError(f"{name} = {value}: expected a power of two from {low} to {high}")
    return value


def trade_offs(n: int) -> list[int]:
    """Several K of Thm 6.2 for N: 1 (Thm 6.1), 2, 4 and N/2 (the linear buffer), those
    that exist."""
    return sorted({k for k in (1, 2, 4, n // 2) if 1 <= k <= n // 2})


def counts_table(n_max: int = 1024) -> pd.DataFrame:
    """Thm 6.1 and 6.2 counted: for N = 4 … n_max and several K, the lines and the fiber
    (in packet times) the construction builds beside the theorem's 2(log N + K − log K) − 3
    and N − 1 + (N − 2K)/(2K)."""
    power_of_two(n_max, "--n-max", 4, MAX_N)
    rows = []
    for n in (1 << i for i in range(2, n_max.bit_length())):
        for k in trade_offs(n):
            layout = core().optical_layout(n, k)
            rows.append(
                {
                    "N": n,
                    "K": k,
                    "buffer_pkts": n - 1,
                    "lines": layout["lines"],
                    "theorem_lines": layout["theorem_lines"],
                    "fiber_slots": layout["length"],
                    "theorem_fiber_slots": layout["theorem_length"],
                    "longest": layout["longest"],
                    "holds": layout["lines"] == layout["theorem_lines"]
                    and layout["length"] == layout["theorem_length"],
                }
            )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Pattern:
    """A request pattern of the engine's (`optical::requests`)."""

    name: str
    load: float = 0.0
    depart: float = 0.0
    longest: int = 0

    def label(self, n: int) -> str:
        if self.name == "bernoulli":
            return f"Bernoulli, load {self.load:g}"
        if self.name == "bursts":
            return f"bursts of 1…{self.longest or 2 * n}"
        return self.name


def patterns() -> list[Pattern]:
    """F8's patterns: Bernoulli arrivals and departures at loads 0.5 … 1.0, and the
    adversarial ones: bursts of up to 2N arrivals or departures (they fill, overflow and
    drain the buffer), and the sawtooth (fill past full, hold full, drain)."""
    bernoulli = [Pattern("bernoulli", load=load, depart=DEPARTURE_P) for load in LOADS]
    return [*bernoulli, Pattern("bursts"), Pattern("sawtooth")]


def exactness_table(
    sizes: tuple[int, ...] = (4, 16, 64, 256, 1024),
    ks: tuple[int, ...] = (1,),
    slots: int = 200_000,
    seed: int = 1,
) -> pd.DataFrame:
    """Each pattern through the optical FIFO and an electronic FIFO of N − 1, slot by slot:
    the requests, the drops and departures, the slots in which the two differed (0: Thm
    6.1), the model's breaches of Appendix E's properties (0), the most packets in W (below
    N/(2K)) and the most delay-line passes of a packet. K larger than N/2 is skipped."""
    for n in sizes:
        power_of_two(n, "N", 2, MAX_N)
    for k in ks:
        power_of_two(k, "--k", 1, MAX_N // 2)
    if not 1 <= slots <= MAX_SLOTS:
        raise OpticalInputError(f"--slots {slots}: expected 1 to {MAX_SLOTS:,} (about two minutes)")
    rows = []
    for n in sizes:
        for k in (k for k in ks if k <= n // 2):
            for p in patterns():
                longest = p.longest or 2 * n
                r = core().optical_check(n, k, p.name, p.load, p.depart, longest, slots, seed)
                rows.append(
                    {
                        "N": n,
                        "K": k,
                        "pattern": p.label(n),
                        "slots": r["slots"],
                        "arrivals": r["arrivals"],
                        "drops": r["drops"],
                        "departures": r["departures"],
                        "mismatches": r["mismatches"],
                        "violations": r["violations"],
                        "waiting_max": r["waiting_max"],
                        "waiting_bound": n // (2 * k),
                        "passes_max": r["passes_max"],
                        "from_waiting": r["from_waiting"],
                    }
                )
    return pd.DataFrame(rows)


# A walk's request tokens: one per slot.
TOKENS = {
    "a": (False, True),
    "d": (True, False),
    "ad": (True, True),
    "da": (True, True),
    "-": (False, False),
}
# A walk prints every cell of every line each slot: kept to what a terminal shows.
WALK_MAX_N = 64
WALK_MAX_SLOTS = 1000


def parse_requests(text: str) -> list[tuple[bool, bool]]:
    """Tokens separated by spaces or commas, one per slot: a (an arrival), d (a departure),
    ad (both), - (neither); as (departure, arrival) pairs."""
    requests = []
    for token in text.replace(",", " ").split():
        if token not in TOKENS:
            raise OpticalInputError(
                f"--requests: got {token!r}; expected one token per slot: a (arrival), "
                "d (departure), ad (both) or - (neither)"
            )
        requests.append(TOKENS[token])
    if not requests:
        raise OpticalInputError("--requests: got no slot; expected tokens such as 'a a a d ad'")
    return requests


def random_requests(slots: int, load: float, seed: int) -> list[tuple[bool, bool]]:
    """`slots` Bernoulli slots: a departure request with probability 1/2 and an arrival with
    probability load/2 (Python's own generator: a walk only shows the slots)."""
    if not 0 <= load <= 2:
        raise OpticalInputError(f"--load {load}: expected 0 to 2 (arrivals per departure request)")
    rng = random.Random(seed)
    return [(rng.random() < DEPARTURE_P, rng.random() < load * DEPARTURE_P) for _ in range(slots)]


def walk(n: int, k: int, requests: list[tuple[bool, bool]]) -> str:
    """The slots of `requests` through an empty optical FIFO of N − 1 packets, as text."""
    power_of_two(n, "--n", 2, WALK_MAX_N)
    power_of_two(k, "--k", 1, max(1, n // 2))
    if len(requests) > WALK_MAX_SLOTS:
        raise OpticalInputError(
            f"{len(requests)} slots: expected at most {WALK_MAX_SLOTS} in a walk"
        )
    return core().optical_walk(n, k, requests)
