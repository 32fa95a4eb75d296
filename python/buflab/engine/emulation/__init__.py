"""Emulation: a scenario on real Linux TCP, in network namespaces, through one exact
bottleneck in our own userspace datapath (`buflab-datapath`, the `buflab-emu` crate), with the
simulator's queue discipline code.

- `testbed`: the namespaces, veth pairs, addresses and offloads of one run, and their removal
  (on exit, on Ctrl-C, on error, and stale ones left by a killed run);
- `plan`: what of a scenario the emulator can realise, refused key by key otherwise, and the
  flows' start times and RTTs drawn exactly as the simulator draws them;
- `runner`: one emulation run: the datapath, the traffic, the warm-up, the results.

Needs root (or CAP_NET_ADMIN and CAP_NET_RAW) and `ethtool`, which `scripts/setup` installs.
"""
