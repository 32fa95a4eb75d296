//! The `emulation` section: settings that only `buflab emulate` (real Linux TCP in network
//! namespaces) has a use for.
//!
//! Read first: [`super`] (how `Scenario::read` calls one reader per section). Owns the reader
//! of `emulation.*`. The simulator has no kernel, no NIC offloads and no datapath: it reads
//! the section so that a misspelt key is an error in either, and otherwise leaves it to the
//! emulator, whose runner (Python's `buflab.engine.emulation`) reads the validated values.

use super::reader::{Asked, Result, Table};

/// `[emulation]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Emulation {
    /// Leave the interfaces' segmentation and checksum offloads on (TSO, GSO, GRO).
    pub offloads: bool,
    /// With offloads: the datapath cuts each TCP super-packet into MTU segments where it
    /// enters the flow's access link, as a NIC's TSO would put it on the wire.
    pub segment: bool,
    /// The most segments the senders' kernels put in one GSO packet (their devices'
    /// `gso_max_segs`); 0: the kernel's own limit, and its autosizing.
    pub gso_segments: u64,
}

pub(super) fn read(root: &mut Table, asked: &mut Asked) -> Result<Emulation> {
    let mut em = root.table("emulation", "emulation")?;
    let offloads = em.boolean("offloads")?;
    let segment = em.boolean("segment")?;
    // Linux's GSO_MAX_SEGS.
    let gso_segments = em.uint("gso_segments", 0, 65_535)?;
    em.finish(asked)?;
    Ok(Emulation { offloads, segment, gso_segments })
}
