//! # buflab-emu
//!
//! The emulator's datapath: real Ethernet frames between network namespaces, through one
//! exact bottleneck built from the simulator's own queue disciplines (`buflab-queue`), each
//! flow's propagation delay where the simulator puts it (the way there in front of the
//! bottleneck, the way back in a delay line). It is the only place a packet
//! waits on the measured path: no kernel qdisc, no netem.
//!
//! Read first: [`bottleneck`] (the link, the simulator's timetable on real frames), then
//! [`delay_line`], [`pool`] (where frames live while they wait) and [`afpacket`] (the sockets).
//! The binary `buflab-datapath` (`src/bin/datapath.rs`) wires them into a busy-polling loop.
//!
//! Times are picoseconds of the monotonic clock ([`clock`]), so that the same integer
//! serialization times as the simulator's apply; every decision is made from ideal times
//! (when a packet *should* start and leave), and the loop then sends each frame when the clock
//! reaches its time. How late it was is measured ([`fidelity`]), never hidden.

pub mod address;
pub mod afpacket;
pub mod bottleneck;
pub mod bumps;
pub mod capture;
pub mod clock;
pub mod control;
pub mod delay_line;
pub mod fidelity;
pub mod flows;
pub mod ip;
pub mod pipeline;
pub mod pool;
pub mod ring;
pub mod segment;
pub mod sys;
pub mod tcp_info;
pub mod traffic;
