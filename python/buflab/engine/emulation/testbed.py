"""The network namespaces of one emulation run: a sender host, a router whose datapath bridges
its two interfaces, and a receiver host, joined by veth pairs.

    snd ──veth── rtr (buflab-datapath: bottleneck, delay lines) ──veth── rcv

Every name carries the run's prefix, `bl` and the process id (`bl4242-snd`, interfaces
`bl4242s0`), so that a run removes exactly its own, and the next run can tell which ones a
killed run left (its process is gone) and remove those. Nothing touches the host namespace's
interfaces: the veth pairs are created straight into the run's namespaces. Offloads (TSO,
GSO, GRO, checksums) are off unless asked: with them on, the kernel hands the datapath 64 KB
super-packets instead of the 1500-byte frames the buffer counts.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any

from buflab.engine import Error

PREFIX = "bl"
SENDER_IP = "10.200.0.1"
RECEIVER_IP = "10.200.0.2"
OFFLOADS = ("tso", "gso", "gro", "tx", "rx")


class EmulationError(Error):
    """The machine cannot run an emulation (permissions, a missing tool, a failed command),
    or its datapath refused a command."""


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise EmulationError(f"ip {' '.join(args)}: {done.stderr.strip() or 'failed'}")


def require_privileges() -> None:
    """One line unless this process may create namespaces and raw sockets."""
    if not _has_caps():
        raise EmulationError(
            "emulate: needs root (or CAP_NET_ADMIN and CAP_NET_RAW) to create network namespaces"
        )
    for tool in ("ip", "ethtool"):
        if shutil.which(tool) is None:
            raise EmulationError(f"emulate: `{tool}` not found; `bash scripts/setup` installs it")


def _has_caps() -> bool:
    """Whether CAP_NET_ADMIN (12) and CAP_NET_RAW (13) are in the effective set."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("CapEff:"):
                    eff = int(line.split()[1], 16)
                    return bool(eff & (1 << 12)) and bool(eff & (1 << 13))
    except OSError:
        return False
    return False


def namespaces() -> list[str]:
    """Every network namespace on the machine, by name."""
    done = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return [line.split()[0] for line in done.stdout.splitlines() if line.strip()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale() -> list[str]:
    """Removes the namespaces of runs whose process is gone (killed with SIGKILL); returns
    their names. Removing a namespace removes its veth ends, and so the pairs."""
    removed = []
    for name in namespaces():
        found = re.fullmatch(rf"{PREFIX}(\d+)-(snd|rtr|rcv)", name)
        if found and not _alive(int(found.group(1))):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
            removed.append(name)
    return removed


@dataclass
class Testbed:
    """One run's namespaces; `create` builds them, `remove` takes them down (both safe to call
    twice). Use as a context manager."""

    prefix: str
    offloads: bool = False

    @classmethod
    def for_this_process(cls, offloads: bool = False) -> Testbed:
        return cls(f"{PREFIX}{os.getpid()}", offloads)

    @property
    def sender(self) -> str:
        return f"{self.prefix}-snd"

    @property
    def router(self) -> str:
        return f"{self.prefix}-rtr"

    @property
    def receiver(self) -> str:
        return f"{self.prefix}-rcv"

    @property
    def router_ports(self) -> tuple[str, str]:
        """The router's interfaces: toward the sender, toward the receiver."""
        return f"{self.prefix}r0", f"{self.prefix}r1"

    def create(self) -> Testbed:
        self.remove()
        p = self.prefix
        for ns in (self.sender, self.router, self.receiver):
            _ip("netns", "add", ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        left, right = self.router_ports
        _ip(
            "link",
            "add",
            f"{p}s0",
            "netns",
            self.sender,
            "type",
            "veth",
            "peer",
            "name",
            left,
            "netns",
            self.router,
        )
        _ip(
            "link",
            "add",
            f"{p}d0",
            "netns",
            self.receiver,
            "type",
            "veth",
            "peer",
            "name",
            right,
            "netns",
            self.router,
        )
        _ip("-n", self.sender, "addr", "add", f"{SENDER_IP}/24", "dev", f"{p}s0")
        _ip("-n", self.receiver, "addr", "add", f"{RECEIVER_IP}/24", "dev", f"{p}d0")
        for ns, dev in (
            (self.sender, f"{p}s0"),
            (self.receiver, f"{p}d0"),
            (self.router, left),
            (self.router, right),
        ):
            _ip("-n", ns, "link", "set", dev, "up")
            if not self.offloads:
                self._offloads_off(ns, dev)
        for dev in (left, right):
            # The datapath reads frames addressed to the far host, not to the router.
            _ip("-n", self.router, "link", "set", dev, "promisc", "on")
        for ns, dev in ((self.sender, f"{p}s0"), (self.receiver, f"{p}d0")):
            self._receive_elsewhere(ns, dev)
        return self

    def _receive_elsewhere(self, ns: str, dev: str) -> None:
        """Has the hosts' kernels process what the datapath sends them on the CPUs other than
        the datapath's (receive packet steering): a veth delivers in its sender's context, so
        otherwise every send of the datapath would run a whole TCP receive path first."""
        cpus = os.cpu_count() or 1
        if cpus < 2:
            return
        mask = format((1 << (cpus - 1)) - 1, "x")
        self.write_in(ns, f"/sys/class/net/{dev}/queues/rx-0/rps_cpus", mask)

    def write_in(self, ns: str, path: str, value: str) -> None:
        """Writes `value` to the file `path` as namespace `ns` sees it (its /proc/sys/net
        settings, its interfaces' /sys files)."""
        done = subprocess.run(
            ["ip", "netns", "exec", ns, "sh", "-c", f"echo {value} > {path}"],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise EmulationError(f"{path}: {done.stderr.strip() or 'could not be set'}")

    def _offloads_off(self, ns: str, dev: str) -> None:
        args = ["ip", "netns", "exec", ns, "ethtool", "-K", dev]
        for feature in OFFLOADS:
            args += [feature, "off"]
        done = subprocess.run(args, capture_output=True, text=True)
        if done.returncode != 0:
            raise EmulationError(f"ethtool -K {dev}: {done.stderr.strip() or 'failed'}")

    def kernel_queues(self) -> dict[str, Any]:
        """The kernel queueing disciplines on every interface of the run, and what passed
        through them: with only `noqueue` (a veth's default) nothing waited in a kernel queue,
        so the datapath's buffer is the only one on the path."""
        kinds: set[str] = set()
        packets = backlog = 0
        for ns in (self.sender, self.router, self.receiver):
            done = subprocess.run(
                ["ip", "netns", "exec", ns, "tc", "-s", "-j", "qdisc", "show"],
                capture_output=True,
                text=True,
            )
            for q in json.loads(done.stdout or "[]"):
                kinds.add(str(q.get("kind")))
                packets += int(q.get("packets", 0))
                backlog += int(q.get("backlog", 0))
        return {"kinds": sorted(kinds), "packets": packets, "backlog_bytes": backlog}

    def remove(self) -> None:
        for ns in (self.sender, self.router, self.receiver):
            if ns in namespaces():
                subprocess.run(["ip", "netns", "del", ns], capture_output=True)

    def exec_args(self, ns: str, *argv: str) -> list[str]:
        """The command line that runs `argv` inside namespace `ns`."""
        return ["ip", "netns", "exec", ns, *argv]

    def __enter__(self) -> Testbed:
        return self.create()

    def __exit__(self, *exc: object) -> None:
        self.remove()
