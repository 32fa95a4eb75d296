//! TCP segmentation of a super-packet, as a NIC's TSO puts it on the wire: the kernel with
//! offloads on hands the datapath one frame of up to 64 KB (its `virtio_net_hdr` says how to
//! cut it: `gso_size` bytes of payload per segment); a NIC would send it as back-to-back
//! MTU frames at line rate, and so does the datapath, cutting it where it enters the flow's
//! access link (`emulation.segment`).
//!
//! Read first: [`crate::pool`] (where the vnet header sits) and virtio 1.x §5.1.6.2 (the
//! header). Each segment gets the super-packet's Ethernet, IP and TCP headers with: the IP
//! total length of its own, the IP identification incremented per segment, a fresh IP
//! checksum; the TCP sequence number advanced by the payload before it, CWR on the first
//! segment only and FIN and PSH on the last only (Linux's `tcp_gso_segment`), and a TCP
//! checksum computed in full (RFC 793 §3.1's pseudo-header), so that the segments go out with
//! an empty vnet header (no offload asked of the far side). Must not know pools or sockets.

const ETH: usize = 14;

/// `VIRTIO_NET_HDR_GSO_TCPV4`, and the flag saying the super-packet carries CWR.
const GSO_TCPV4: u8 = 1;
const GSO_ECN: u8 = 0x80;

/// The fields of a `virtio_net_hdr` the cutting needs (native byte order, as
/// `PACKET_VNET_HDR` gives it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vnet {
    pub gso_type: u8,
    pub gso_size: u16,
}

impl Vnet {
    pub fn read(h: &[u8]) -> Vnet {
        Vnet { gso_type: h[1], gso_size: u16::from_ne_bytes([h[4], h[5]]) }
    }
}

/// The headers' length (Ethernet, IPv4, TCP) and the payload's of an IPv4 TCP frame.
fn layout(frame: &[u8]) -> Option<(usize, usize)> {
    if frame.len() < ETH + 20 || u16::from_be_bytes([frame[12], frame[13]]) != 0x0800 || frame[ETH + 9] != 6 {
        return None;
    }
    let ihl = (frame[ETH] & 0x0f) as usize * 4;
    let tcp = ETH + ihl;
    let headers = tcp + (*frame.get(tcp + 12)? >> 4) as usize * 4;
    let total = ETH + u16::from_be_bytes([frame[ETH + 2], frame[ETH + 3]]) as usize;
    (headers <= total && total <= frame.len()).then_some((headers, total - headers))
}

/// How many segments `frame` (with vnet header `vnet`) is cut into: None if it is not a TCP
/// super-packet of more than one segment (it then goes through whole).
pub fn count(frame: &[u8], vnet: Vnet) -> Option<usize> {
    if vnet.gso_type & !GSO_ECN != GSO_TCPV4 || vnet.gso_size == 0 {
        return None;
    }
    let (_, payload) = layout(frame)?;
    let n = payload.div_ceil(vnet.gso_size as usize);
    (n > 1).then_some(n)
}

/// Writes segment `k` of `frame` (cut every `vnet.gso_size` bytes of payload, `count`
/// segments) into `out`; returns its length.
pub fn write(frame: &[u8], vnet: Vnet, k: usize, out: &mut [u8]) -> usize {
    let (headers, payload) = layout(frame).expect("a frame `count` accepted");
    let mss = vnet.gso_size as usize;
    let n = payload.div_ceil(mss);
    let (from, len) = (k * mss, mss.min(payload - k * mss));
    out[..headers].copy_from_slice(&frame[..headers]);
    out[headers..headers + len].copy_from_slice(&frame[headers + from..headers + from + len]);
    let ip = ETH;
    let ihl = (frame[ip] & 0x0f) as usize * 4;
    let tcp = ip + ihl;
    let total = (headers - ETH + len) as u16;
    out[ip + 2..ip + 4].copy_from_slice(&total.to_be_bytes());
    let id = u16::from_be_bytes([frame[ip + 4], frame[ip + 5]]).wrapping_add(k as u16);
    out[ip + 4..ip + 6].copy_from_slice(&id.to_be_bytes());
    out[ip + 10..ip + 12].copy_from_slice(&[0, 0]);
    let c = !fold(sum(&out[ip..tcp], 0));
    out[ip + 10..ip + 12].copy_from_slice(&c.to_be_bytes());
    let seq = u32::from_be_bytes([frame[tcp + 4], frame[tcp + 5], frame[tcp + 6], frame[tcp + 7]]);
    out[tcp + 4..tcp + 8].copy_from_slice(&seq.wrapping_add(from as u32).to_be_bytes());
    // Flags: CWR (0x80) on the first only; FIN (0x01) and PSH (0x08) on the last only.
    let mut flags = frame[tcp + 13];
    if k > 0 {
        flags &= !0x80;
    }
    if k + 1 < n {
        flags &= !(0x01 | 0x08);
    }
    out[tcp + 13] = flags;
    // The TCP checksum over the pseudo-header (addresses, protocol, TCP length) and segment.
    out[tcp + 16..tcp + 18].copy_from_slice(&[0, 0]);
    let tcp_len = (headers - tcp + len) as u32;
    let pseudo = sum(&out[ip + 12..ip + 20], 6 + tcp_len);
    let c = !fold(sum(&out[tcp..headers + len], pseudo));
    out[tcp + 16..tcp + 18].copy_from_slice(&c.to_be_bytes());
    headers + len
}

/// The ones' complement sum of `bytes` as 16-bit words (an odd last byte padded), added to
/// `start`, not yet folded.
fn sum(bytes: &[u8], start: u32) -> u32 {
    let mut s = start as u64;
    let mut words = bytes.chunks_exact(2);
    for w in &mut words {
        s += u16::from_be_bytes([w[0], w[1]]) as u64;
    }
    if let [last] = words.remainder() {
        s += (*last as u64) << 8;
    }
    while s > 0xffff_ffff {
        s = (s & 0xffff_ffff) + (s >> 32);
    }
    s as u32
}

fn fold(mut s: u32) -> u16 {
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4 TCP frame of `payload` bytes (a 32-byte TCP header: timestamps), sequence
    /// number `seq`, flags `flags`, IP id 100, its checksums computed by the test's own
    /// straightforward code.
    fn frame(payload: usize, seq: u32, flags: u8) -> Vec<u8> {
        let mut f = vec![0u8; ETH + 20 + 32 + payload];
        f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        let total = (20 + 32 + payload) as u16;
        let ip = [0x45, 0x02, 0, 0, 0, 100, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 1, 0, 1];
        f[ETH..ETH + 20].copy_from_slice(&ip);
        f[ETH + 2..ETH + 4].copy_from_slice(&total.to_be_bytes());
        let t = ETH + 20;
        f[t..t + 4].copy_from_slice(&[0x9c, 0x41, 0x13, 0x89]);
        f[t + 4..t + 8].copy_from_slice(&seq.to_be_bytes());
        f[t + 12] = 8 << 4;
        f[t + 13] = flags;
        for (i, b) in f[t + 32..].iter_mut().enumerate() {
            *b = (i * 7 + 3) as u8;
        }
        f
    }

    /// The ones' complement checksum of 16-bit words, written the slow way.
    fn checksum(words: &[u8]) -> u16 {
        let mut s: u32 = 0;
        for (i, b) in words.iter().enumerate() {
            s += if i % 2 == 0 { (*b as u32) << 8 } else { *b as u32 };
        }
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }

    /// Whether a segment's IP and TCP checksums verify (a correct header sums to 0xffff).
    fn verifies(seg: &[u8]) -> bool {
        let ip_ok = checksum(&seg[ETH..ETH + 20]) == 0;
        let tcp_len = seg.len() - ETH - 20;
        let mut pseudo = seg[ETH + 12..ETH + 20].to_vec();
        pseudo.extend_from_slice(&[0, 6]);
        pseudo.extend_from_slice(&(tcp_len as u16).to_be_bytes());
        pseudo.extend_from_slice(&seg[ETH + 20..]);
        ip_ok && checksum(&pseudo) == 0
    }

    #[test]
    fn a_super_packet_is_cut_into_mss_segments_that_verify() {
        // 4,000 bytes at an MSS of 1,448: segments of 1,448, 1,448 and 1,104, sequence numbers
        // 1000, 2448, 3896, IP ids 100-102; CWR on the first, PSH and FIN on the last only.
        let sp = frame(4000, 1000, 0x80 | 0x10 | 0x08 | 0x01);
        let vnet = Vnet { gso_type: GSO_TCPV4 | GSO_ECN, gso_size: 1448 };
        assert_eq!(count(&sp, vnet), Some(3));
        let mut out = vec![0u8; 2048];
        let mut payload = Vec::new();
        for (k, (len, seq, flags)) in
            [(1448, 1000, 0x90), (1448, 2448, 0x10), (1104, 3896, 0x19)].into_iter().enumerate()
        {
            let n = write(&sp, vnet, k, &mut out);
            let seg = &out[..n];
            assert_eq!(n, ETH + 52 + len);
            assert_eq!(u16::from_be_bytes([seg[16], seg[17]]) as usize, 52 + len, "IP total length");
            assert_eq!(u16::from_be_bytes([seg[18], seg[19]]), 100 + k as u16, "IP id");
            assert_eq!(u32::from_be_bytes([seg[38], seg[39], seg[40], seg[41]]), seq);
            assert_eq!(seg[47], flags, "segment {k}'s flags");
            assert!(verifies(seg), "segment {k}'s checksums");
            payload.extend_from_slice(&seg[ETH + 52..]);
        }
        assert_eq!(payload, sp[ETH + 52..], "the payload, in order, whole");
    }

    #[test]
    fn frames_that_need_no_cutting_go_through_whole() {
        let one = frame(1448, 0, 0x10);
        assert_eq!(count(&one, Vnet { gso_type: GSO_TCPV4, gso_size: 1448 }), None, "one segment");
        assert_eq!(count(&frame(4000, 0, 0x10), Vnet { gso_type: 0, gso_size: 0 }), None, "no GSO");
        let mut udp = frame(4000, 0, 0);
        udp[ETH + 9] = 17;
        assert_eq!(count(&udp, Vnet { gso_type: GSO_TCPV4, gso_size: 1448 }), None, "not TCP");
        // An odd-length last segment's checksum pads its last byte.
        let sp = frame(2001, 5, 0x18);
        let vnet = Vnet { gso_type: GSO_TCPV4, gso_size: 1000 };
        let mut out = vec![0u8; 2048];
        let n = write(&sp, vnet, 2, &mut out);
        assert_eq!(n, ETH + 52 + 1);
        assert!(verifies(&out[..n]));
    }
}
