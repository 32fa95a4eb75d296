//! A TCP socket's `TCP_INFO` (linux/tcp.h, struct tcp_info), as far as the fields the flows
//! table reads: the kernel fills as much of it as it has, and says how much.
//!
//! Read first: tcp(7). The layout is the kernel's ABI, stable and append-only.

use std::os::fd::RawFd;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpInfo {
    pub state: u8,
    pub ca_state: u8,
    pub retransmits: u8,
    pub probes: u8,
    pub backoff: u8,
    pub options: u8,
    pub wscale: u8,
    pub flags: u8,
    pub rto: u32,
    pub ato: u32,
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub fackets: u32,
    pub last_data_sent: u32,
    pub last_ack_sent: u32,
    pub last_data_recv: u32,
    pub last_ack_recv: u32,
    pub pmtu: u32,
    pub rcv_ssthresh: u32,
    /// Smoothed RTT and its variation, µs.
    pub rtt: u32,
    pub rttvar: u32,
    pub snd_ssthresh: u32,
    /// Congestion window, segments.
    pub snd_cwnd: u32,
    pub advmss: u32,
    pub reordering: u32,
    pub rcv_rtt: u32,
    pub rcv_space: u32,
    /// Segments retransmitted over the connection's life.
    pub total_retrans: u32,
    pub pacing_rate: u64,
    pub max_pacing_rate: u64,
    /// Payload bytes acknowledged (RFC 4898 tcpEStatsAppHCThruOctetsAcked).
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u32,
    pub segs_in: u32,
    pub notsent_bytes: u32,
    pub min_rtt: u32,
    pub data_segs_in: u32,
    pub data_segs_out: u32,
    pub delivery_rate: u64,
    pub busy_time: u64,
    pub rwnd_limited: u64,
    pub sndbuf_limited: u64,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub dsack_dups: u32,
    pub reord_seen: u32,
    pub rcv_ooopack: u32,
    pub snd_wnd: u32,
    pub rcv_wnd: u32,
    pub rehash: u32,
    /// Retransmission timeouts over the connection's life, SYN's included (Linux 6.7 on; an
    /// older kernel leaves it out, and [`read`] says so).
    pub total_rto: u16,
    pub total_rto_recoveries: u16,
    pub total_rto_time: u32,
}

/// A socket's `TCP_INFO`, and whether the kernel filled `total_rto` (it is newer than 6.7).
#[derive(Clone, Copy, Debug, Default)]
pub struct Reading {
    pub info: TcpInfo,
    pub has_total_rto: bool,
}

/// The socket's `TCP_INFO`; fields the kernel did not fill stay zero.
pub fn read(fd: RawFd) -> std::io::Result<Reading> {
    let mut info = TcpInfo::default();
    let mut len = std::mem::size_of::<TcpInfo>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `info`, a plain-data struct.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            &mut info as *mut _ as *mut libc::c_void,
            &mut len,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let has_total_rto = len as usize >= std::mem::offset_of!(TcpInfo, total_rto_recoveries);
    Ok(Reading { info, has_total_rto })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_matches_the_kernels_offsets() {
        // linux/tcp.h: eight bytes of u8 fields, 24 u32 up to total_retrans, then u64s.
        assert_eq!(std::mem::offset_of!(TcpInfo, rto), 8);
        assert_eq!(std::mem::offset_of!(TcpInfo, total_retrans), 100);
        assert_eq!(std::mem::offset_of!(TcpInfo, pacing_rate), 104);
        assert_eq!(std::mem::offset_of!(TcpInfo, bytes_acked), 120);
        assert_eq!(std::mem::offset_of!(TcpInfo, delivery_rate), 160);
        assert_eq!(std::mem::offset_of!(TcpInfo, bytes_retrans), 208);
        // Linux 6.7's tail: six u32 from 216, then total_rto (u16) at 240.
        assert_eq!(std::mem::offset_of!(TcpInfo, total_rto), 240);
        assert_eq!(std::mem::size_of::<TcpInfo>(), 248);
    }
}
