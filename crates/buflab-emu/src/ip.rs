//! The few header fields the datapath reads or writes in a frame: its IPv4 addresses (which
//! say its flow, see [`crate::address`]), whether it is UDP, a TCP segment's ports,
//! sequence number and payload length, whether its IP header is ECN-capable, and setting
//! Congestion Experienced (RFC 3168 §5) with the IPv4 checksum
//! updated incrementally (RFC 1624, eq. 3).
//!
//! Read first: nothing. Frames are Ethernet II, untagged (the namespaces' veths make them).

const ETH: usize = 14;

/// The ECN field of the frame's IP header (IPv4 or IPv6), if it has one.
pub fn ecn(frame: &[u8]) -> Option<u8> {
    match ethertype(frame)? {
        0x0800 if frame.len() >= ETH + 20 => Some(frame[ETH + 1] & 3),
        0x86dd if frame.len() >= ETH + 40 => Some((frame[ETH + 1] >> 4) & 3),
        _ => None,
    }
}

/// Whether the frame is ECN-capable (ECT(0) or ECT(1)), and whether it is ECT(1), the L4S
/// identifier (RFC 9331 §4.1).
pub fn ect(frame: &[u8]) -> (bool, bool) {
    let field = ecn(frame);
    (matches!(field, Some(1 | 2)), field == Some(1))
}

/// Sets CE in the frame's IP header (an ECN-capable one).
pub fn set_ce(frame: &mut [u8]) {
    match ethertype(frame) {
        Some(0x0800) if frame.len() >= ETH + 20 => {
            let old = u16::from_be_bytes([frame[ETH], frame[ETH + 1]]);
            frame[ETH + 1] |= 3;
            let new = u16::from_be_bytes([frame[ETH], frame[ETH + 1]]);
            // HC' = ~(~HC + ~m + m') in ones' complement arithmetic.
            let hc = u16::from_be_bytes([frame[ETH + 10], frame[ETH + 11]]);
            let mut sum = (!hc as u32) + (!old as u32) + new as u32;
            while sum > 0xffff {
                sum = (sum & 0xffff) + (sum >> 16);
            }
            frame[ETH + 10..ETH + 12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        }
        Some(0x86dd) if frame.len() >= ETH + 40 => frame[ETH + 1] |= 3 << 4,
        _ => {}
    }
}

/// The (source, destination) ports of an IPv4 TCP segment.
pub fn tcp_ports(frame: &[u8]) -> Option<(u16, u16)> {
    if ethertype(frame)? != 0x0800 || frame.len() < ETH + 20 || frame[ETH + 9] != 6 {
        return None;
    }
    let ihl = (frame[ETH] & 0x0f) as usize * 4;
    let at = ETH + ihl;
    (frame.len() >= at + 4).then(|| {
        (u16::from_be_bytes([frame[at], frame[at + 1]]), u16::from_be_bytes([frame[at + 2], frame[at + 3]]))
    })
}

/// The (source, destination) addresses of an IPv4 packet, as integers.
pub fn ipv4_addrs(frame: &[u8]) -> Option<(u32, u32)> {
    if ethertype(frame)? != 0x0800 || frame.len() < ETH + 20 {
        return None;
    }
    let word = |at: usize| u32::from_be_bytes([frame[at], frame[at + 1], frame[at + 2], frame[at + 3]]);
    Some((word(ETH + 12), word(ETH + 16)))
}

/// Whether the frame is an IPv4 UDP datagram.
pub fn is_udp(frame: &[u8]) -> bool {
    ethertype(frame) == Some(0x0800) && frame.len() >= ETH + 20 && frame[ETH + 9] == 17
}

/// The sequence number of an IPv4 TCP segment.
pub fn tcp_seq(frame: &[u8]) -> Option<u32> {
    tcp_ports(frame)?;
    let at = ETH + (frame[ETH] & 0x0f) as usize * 4 + 4;
    (frame.len() >= at + 4)
        .then(|| u32::from_be_bytes([frame[at], frame[at + 1], frame[at + 2], frame[at + 3]]))
}

/// The payload bytes of an IPv4 TCP segment (0 for a pure ACK, a SYN or a FIN): the IP
/// total length less the IP and TCP headers.
pub fn tcp_payload_len(frame: &[u8]) -> Option<u32> {
    tcp_ports(frame)?;
    let ihl = (frame[ETH] & 0x0f) as usize * 4;
    let offset_at = ETH + ihl + 12;
    let total = u16::from_be_bytes([frame[ETH + 2], frame[ETH + 3]]) as usize;
    let tcp_header = (*frame.get(offset_at)? >> 4) as usize * 4;
    Some(total.saturating_sub(ihl + tcp_header) as u32)
}

/// Whether an IPv4 TCP segment carries ECN-Echo (RFC 3168 §6.1.1: the ECE flag, 0x40).
pub fn tcp_ece(frame: &[u8]) -> bool {
    tcp_ports(frame).is_some() && {
        let at = ETH + (frame[ETH] & 0x0f) as usize * 4 + 13;
        frame.get(at).is_some_and(|f| f & 0x40 != 0)
    }
}

fn ethertype(frame: &[u8]) -> Option<u16> {
    (frame.len() >= ETH).then(|| u16::from_be_bytes([frame[12], frame[13]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The IPv4 header checksum computed from scratch.
    fn checksum(h: &[u8]) -> u16 {
        let mut sum: u32 = 0;
        for i in (0..20).step_by(2) {
            if i != 10 {
                sum += u16::from_be_bytes([h[i], h[i + 1]]) as u32;
            }
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }

    #[test]
    fn marking_ce_keeps_the_ipv4_checksum_right() {
        let mut f = vec![0u8; 60];
        f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        let h = [0x45, 0x02, 0x05, 0xdc, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x06, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        f[14..34].copy_from_slice(&h);
        let c = checksum(&f[14..34]);
        f[24..26].copy_from_slice(&c.to_be_bytes());
        assert_eq!(ect(&f), (true, false));
        set_ce(&mut f);
        assert_eq!(ecn(&f), Some(3));
        assert_eq!(u16::from_be_bytes([f[24], f[25]]), checksum(&f[14..34]));
        // Its TCP ports, after a 20-byte IP header.
        f[34..38].copy_from_slice(&[0x9c, 0x41, 0x13, 0x89]);
        assert_eq!(tcp_ports(&f), Some((40001, 5001)));
        f[38..42].copy_from_slice(&7u32.to_be_bytes());
        assert_eq!(tcp_seq(&f), Some(7));
        // 1500 bytes of IP (0x05dc), 20 of IP header, a 32-byte TCP header (data offset 8).
        f[46] = 8 << 4;
        assert_eq!(tcp_payload_len(&f), Some(1500 - 20 - 32));
        assert!(!tcp_ece(&f));
        f[ETH + 20 + 13] = 0x50; // ACK and ECE
        assert!(tcp_ece(&f));
        assert_eq!(ipv4_addrs(&f), Some((0x0a00_0001, 0x0a00_0002)));
        assert!(!is_udp(&f));
        f[ETH + 9] = 17;
        assert!(is_udp(&f) && tcp_ports(&f).is_none());
        // Not IP: untouched, not ECN-capable.
        let mut arp = vec![0u8; 60];
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert_eq!(ect(&arp), (false, false));
        set_ce(&mut arp);
        assert!(arp.iter().all(|&b| b == 0 || b == 8 || b == 6));
    }
}
