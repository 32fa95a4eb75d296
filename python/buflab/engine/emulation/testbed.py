"""The network namespaces of one emulation run: the sender machines, a router whose datapath
bridges their interfaces to the receiver's, and a receiver host, joined by veth pairs.

    snd  ──veth──┐
    snd1 ──veth──┤ rtr (buflab-datapath: access links or class queues and NICs, each
    …            │      flow's delay, the bottleneck; ACKs' delay lines) ──veth── rcv
    sndM ──veth──┘

Every name carries the run's prefix, `bl` and the process id (`bl4242-snd`, interfaces
`bl4242s0`), so that a run removes exactly its own, and the next run can tell which ones a
killed run left (its process is gone) and remove those. Nothing touches the host namespace's
interfaces: the veth pairs are created straight into the run's namespaces. Offloads (TSO,
GSO, GRO, checksums) are off unless asked: with them on, the kernel hands the datapath 64 KB
super-packets instead of the 1500-byte frames the buffer counts.

Addresses: every flow's sending end has its own address in `FLOW_NET` (see the `address`
module of the `buflab-emu` crate); each sender machine takes the whole network as local
(`ip route add local FLOW_NET dev lo`, "AnyIP": no address per flow), and the receiver
routes it to them. The machines share one address and one MAC on their own links (the
datapath bridges them to the receiver, which sees one gateway), and every neighbour entry is
static, so no ARP crosses the datapath; IPv6 is off, so nothing else does either.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from buflab.engine import Error

PREFIX = "bl"
# A run's scratch directory, in the system's temporary directory.
SCRATCH = "buflab-emulate-"
SENDER_IP = "10.200.0.1"
RECEIVER_IP = "10.200.0.2"
# The flows' network (`buflab_emu::address::FLOW_NET`): flow i's sending end is at its
# address + 1 + i.
FLOW_NET = "10.201.0.0/16"
# Locally administered MACs: every sender machine's (the one gateway the receiver sees), and
# the receiver's.
SENDER_MAC = "02:00:0a:c8:00:01"
RECEIVER_MAC = "02:00:0a:c8:00:02"
OFFLOADS = ("tso", "gso", "gro", "tx", "rx")


class EmulationError(Error):
    """The machine cannot run an emulation (permissions, a missing tool, a failed command),
    or its datapath refused a command."""


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise EmulationError(f"ip {' '.join(args)}: {done.stderr.strip() or 'failed'}")


def _veth(dev: str, ns: str, mac: str, peer: str, peer_ns: str) -> None:
    """A veth pair straight into two namespaces, `dev` (with address `mac`) in `ns` and `peer`
    in `peer_ns`."""
    _ip(
        "link", "add", dev, "netns", ns, "address", mac,
        "type", "veth", "peer", "name", peer, "netns", peer_ns,
    )  # fmt: skip


def _neighbour(ns: str, ip: str, mac: str, dev: str) -> None:
    """A static neighbour entry: `ip` is at `mac` on `dev` in `ns`, never asked for."""
    _ip("-n", ns, "neigh", "add", ip, "lladdr", mac, "dev", dev, "nud", "permanent")


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
    their names. Removing a namespace removes its veth ends, and so the pairs. The scratch
    directories such runs left (`scratch_prefix`: the datapath's raw log, the traces) go too."""
    removed = []
    for name in namespaces():
        found = re.fullmatch(rf"{PREFIX}(\d+)-(snd\d*|rtr|rcv)", name)
        if found and not _alive(int(found.group(1))):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
            removed.append(name)
    for scratch in Path(tempfile.gettempdir()).glob(f"{SCRATCH}*-*"):
        found = re.fullmatch(rf"{SCRATCH}(\d+)-\w+", scratch.name)
        if found and scratch.is_dir() and not _alive(int(found.group(1))):
            shutil.rmtree(scratch, ignore_errors=True)
    return removed


def scratch_prefix() -> str:
    """The prefix of this process's runs' scratch directories: its pid in it, so that
    `remove_stale` knows a killed run's directory from a running one's."""
    return f"{SCRATCH}{os.getpid()}-"


@dataclass
class Testbed:
    """One run's namespaces; `create` builds them, `remove` takes them down (both safe to call
    twice). Use as a context manager."""

    prefix: str
    offloads: bool = False
    machines: int = 1
    # The senders' interfaces' gso_max_segs: the most TCP segments their kernels hand the
    # device at once (0: the kernel's own limit).
    gso_segments: int = 0

    @classmethod
    def for_this_process(
        cls, offloads: bool = False, machines: int = 1, gso_segments: int = 0
    ) -> Testbed:
        return cls(f"{PREFIX}{os.getpid()}", offloads, max(1, machines), gso_segments)

    @property
    def senders(self) -> list[str]:
        """The sender machines' namespaces, machine 0 first."""
        return [f"{self.prefix}-snd{m or ''}" for m in range(self.machines)]

    @property
    def sender(self) -> str:
        return self.senders[0]

    @property
    def router(self) -> str:
        return f"{self.prefix}-rtr"

    @property
    def receiver(self) -> str:
        return f"{self.prefix}-rcv"

    @property
    def router_ports(self) -> tuple[list[str], str]:
        """The router's interfaces: toward each sender machine, toward the receiver."""
        return [f"{self.prefix}m{m}" for m in range(self.machines)], f"{self.prefix}r1"

    def create(self) -> Testbed:
        self.remove()
        p = self.prefix
        for ns in (*self.senders, self.router, self.receiver):
            _ip("netns", "add", ns)
            _ip("-n", ns, "link", "set", "lo", "up")
            # No IPv6: nothing but the scenario's packets crosses the datapath.
            self.write_in(ns, "/proc/sys/net/ipv6/conf/all/disable_ipv6", "1")
            self.write_in(ns, "/proc/sys/net/ipv6/conf/default/disable_ipv6", "1")
        lefts, right = self.router_ports
        hosts = [
            (ns, f"{p}s{m}", left)
            for m, (ns, left) in enumerate(zip(self.senders, lefts, strict=True))
        ]
        for ns, dev, left in hosts:
            _veth(dev, ns, SENDER_MAC, left, self.router)
        _veth(f"{p}d0", self.receiver, RECEIVER_MAC, right, self.router)
        for ns, dev, _ in hosts:
            _ip("-n", ns, "addr", "add", f"{SENDER_IP}/24", "dev", dev)
            if self.gso_segments:
                # Read by each socket as it connects (sk_gso_max_segs), so set before any does.
                _ip("-n", ns, "link", "set", "dev", dev, "gso_max_segs", str(self.gso_segments))
        _ip("-n", self.receiver, "addr", "add", f"{RECEIVER_IP}/24", "dev", f"{p}d0")
        links = [(ns, dev) for ns, dev, _ in hosts] + [(self.receiver, f"{p}d0")]
        for ns, dev in links + [(self.router, port) for port in (*lefts, right)]:
            _ip("-n", ns, "link", "set", dev, "up")
            if not self.offloads:
                self._offloads_off(ns, dev)
        for dev in (*lefts, right):
            # The datapath reads frames addressed to the far host, not to the router.
            _ip("-n", self.router, "link", "set", dev, "promisc", "on")
        for ns, dev, _ in hosts:
            # Every flow address is local to every machine (each binds only its own flows').
            _ip("-n", ns, "route", "add", "local", FLOW_NET, "dev", "lo")
            _neighbour(ns, RECEIVER_IP, RECEIVER_MAC, dev)
        _ip("-n", self.receiver, "route", "add", FLOW_NET, "via", SENDER_IP)
        _neighbour(self.receiver, SENDER_IP, SENDER_MAC, f"{p}d0")
        for ns, dev in links:
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

    def sysctl_everywhere(self, path: str, value: str) -> None:
        """Writes `value` to `path` in every host namespace (senders and receiver)."""
        for ns in (*self.senders, self.receiver):
            self.write_in(ns, path, value)

    def kernel_queues(self) -> dict[str, Any]:
        """The kernel queueing disciplines on every interface of the run, and what passed
        through them: with only `noqueue` (a veth's default) nothing waited in a kernel queue,
        so the datapath's buffer is the only one on the path."""
        kinds: set[str] = set()
        packets = backlog = 0
        for ns in (*self.senders, self.router, self.receiver):
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
        for ns in (*self.senders, self.router, self.receiver):
            if ns in namespaces():
                subprocess.run(["ip", "netns", "del", ns], capture_output=True)

    def exec_args(self, ns: str, *argv: str) -> list[str]:
        """The command line that runs `argv` inside namespace `ns`."""
        return ["ip", "netns", "exec", ns, *argv]

    def __enter__(self) -> Testbed:
        try:
            return self.create()
        except BaseException:
            # Interrupted or failed half-way (Ctrl-C while the namespaces are being set up):
            # what was created goes, as after a run.
            self.remove()
            raise

    def __exit__(self, *exc: object) -> None:
        self.remove()
