//! Flow addresses: how a frame says which of the scenario's flows it belongs to.
//!
//! Read first: nothing. Flow i's sending end (a long-lived flow's sender, a user's server, a
//! UDP source) has an IPv4 address of its own, `FLOW_NET` + 1 + i, on its sender host, and
//! every other end of the run talks to it there; so the datapath knows a frame's flow from its
//! source address going to the receiver and from its destination address coming back, for
//! every traffic kind and every connection alike.
//!
//! Why addresses and not ports: a closed-loop user opens a new connection per file, so a port
//! per flow would need every connection of a user on the same 4-tuple, one after the other,
//! each waiting out the last one's TIME_WAIT or reusing it (a server that closes first keeps
//! it, and a new SYN on it is taken only if its sequence number or timestamp is newer). An
//! address per flow leaves the ports to the kernels, as Harpoon's hosts did, and costs one
//! route on each host: the senders take the whole range as local (`ip route add local
//! 10.201.0.0/16 dev lo`, Linux's "AnyIP"), the receiver routes it to them. No address is
//! configured per flow and no neighbour entry is needed per flow.

use std::net::Ipv4Addr;

/// The flows' network, 10.201.0.0/16: flow i is at its address + 1 + i.
pub const FLOW_NET: Ipv4Addr = Ipv4Addr::new(10, 201, 0, 0);
pub const FLOW_PREFIX: u8 = 16;

/// How many flows the network has addresses for (all but its first and last address).
pub const MAX_FLOWS: usize = (1 << (32 - FLOW_PREFIX)) - 2;

/// The address of flow `flow`'s sending end.
pub fn address(flow: usize) -> Ipv4Addr {
    assert!(flow < MAX_FLOWS, "flow {flow} beyond the flows' network");
    Ipv4Addr::from(u32::from(FLOW_NET) + 1 + flow as u32)
}

/// The flow whose sending end is at `addr` (an integer, as `ip::ipv4_addrs` reads it).
pub fn flow(addr: u32) -> Option<usize> {
    let offset = addr.checked_sub(u32::from(FLOW_NET) + 1)? as usize;
    (offset < MAX_FLOWS).then_some(offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_and_its_address_map_one_to_one() {
        assert_eq!(address(0), Ipv4Addr::new(10, 201, 0, 1));
        assert_eq!(address(300), Ipv4Addr::new(10, 201, 1, 45));
        for f in [0, 1, 255, 256, 65_533] {
            assert_eq!(flow(u32::from(address(f))), Some(f));
        }
        assert_eq!(flow(u32::from(FLOW_NET)), None, "the network's own address is no flow's");
        assert_eq!(flow(u32::from(Ipv4Addr::new(10, 201, 255, 255))), None, "nor its broadcast");
        assert_eq!(flow(u32::from(Ipv4Addr::new(10, 200, 0, 2))), None);
    }
}
