//! GSO autosizing and TSO deferral: how many segments a Linux sender hands its device at once,
//! and when it waits for the window to allow a bigger burst.
//!
//! Read first: Linux's `net/ipv4/tcp_output.c` (`tcp_tso_autosize`, `tcp_tso_segs`,
//! `tcp_cwnd_test`, `tcp_tso_should_defer` and the loop of `tcp_write_xmit` that calls them).
//! A Linux sender builds its send queue from buffers of several segments (GSO packets) even
//! with every offload off: software GSO cuts them into segments only as they leave, back to
//! back. How big they are follows the flow's rate (about 1 ms of it) and, on short paths, a
//! bonus that grows as the RTT shrinks; and when the window would allow only part of one,
//! the sender may wait for the next ACK rather than send a small one (TSO deferral). Both
//! make a Linux flow burstier than a segment-by-segment model: measured in the emulator, two
//! flows at 100 Mb/s and 2 ms sent 4–5 segments per burst at the median, and an ECN-marking
//! phantom queue of 4 packets that passes the model's segments saw those bursts (README).
//!
//! The model works on whole segments, with the write queue's head buffer as a count of
//! segments ([`head_buffer`]): made at the autosized size when it reaches the head (Linux
//! sizes it when the application writes, a little earlier), split when the window allows only
//! part of it, its rest sent before a new one is made.

use crate::units::Time;

/// The most bytes in one GSO packet (`GSO_LEGACY_MAX_SIZE`, a veth's and most NICs'
/// `gso_max_size`).
pub const GSO_MAX_SIZE: u64 = 65_536;
/// `sysctl_tcp_min_tso_segs`: the fewest segments autosizing asks for.
pub const MIN_TSO_SEGS: u32 = 2;
/// `sk_pacing_shift`: a GSO packet of about 2^-10 s (1 ms) of the pacing rate.
const PACING_SHIFT: u32 = 10;
/// `sysctl_tcp_tso_rtt_log`: the short-path bonus halves every 2^9 µs (512 µs) of min RTT.
const TSO_RTT_LOG: u32 = 9;
/// `sysctl_tcp_tso_win_divisor`: a third of the window is enough to send at once.
const TSO_WIN_DIVISOR: u32 = 3;
/// Deferral only right after a write (`tcp_wstamp_ns` within 1 ms).
const RECENT_WRITE: Time = Time::from_ms(1);
/// An ACK due later than min(srtt / 2, 1 ms) is not waited for.
const ACK_WAIT_MAX: Time = Time::from_ms(1);

/// `tcp_tso_autosize` then `tcp_tso_segs`: segments per GSO packet for a flow paced (or whose
/// rate would be paced) at `pacing_bytes_per_s` (None: no rate known yet, Linux's `~0UL`),
/// with `min_rtt` (None: no sample yet) and segments of `mss` payload bytes; at least
/// `min_segs`, at most `max_segs` (the device's `gso_max_segs`; 0: no limit of its own).
pub fn autosize(
    pacing_bytes_per_s: Option<f64>,
    min_rtt: Option<Time>,
    mss: u32,
    min_segs: u32,
    max_segs: u32,
) -> u32 {
    // The pacing rate >> 10: bytes in about a millisecond (1,024 µs).
    let mut bytes = match pacing_bytes_per_s {
        Some(rate) => (rate.max(0.0) as u64) >> PACING_SHIFT,
        None => GSO_MAX_SIZE,
    };
    // Short paths get more (min RTT in units of 512 µs: 65,536 B >> that), since 5.15.
    if let Some(rtt) = min_rtt {
        let r = (rtt.ps() / 1_000_000) >> TSO_RTT_LOG;
        if r < 32 {
            bytes += GSO_MAX_SIZE >> r;
        }
    }
    let segs = ((bytes.min(GSO_MAX_SIZE) / mss as u64) as u32).max(min_segs);
    if max_segs == 0 {
        segs
    } else {
        segs.min(max_segs)
    }
}

/// `tcp_cwnd_test`: segments the window lets the next GSO packet carry, at most half the
/// window ("at least 2 GSO packets in flight"), 0 when the window is full.
pub fn cwnd_quota(cwnd: u32, in_flight: u32) -> u32 {
    if in_flight >= cwnd {
        0
    } else {
        (cwnd / 2).max(1).min(cwnd - in_flight)
    }
}

/// The segments of the write queue's head buffer: its rest if part was sent, else a new one
/// of `size` segments, bounded by the data `left` to send.
pub fn head_buffer(rest: u32, size: u32, left: u32) -> u32 {
    if rest > 0 {
        rest.min(left)
    } else {
        size.min(left)
    }
}

/// What `tcp_tso_should_defer` looks at, in segments and times.
#[derive(Clone, Copy, Debug)]
pub struct DeferCheck {
    pub now: Time,
    /// Recovery or Loss: never defer.
    pub recovering: bool,
    /// The last write's departure (`tcp_wstamp_ns`: later than the last send when paced).
    pub last_write: Time,
    pub cwnd: u32,
    pub in_flight: u32,
    /// The receiver's window, segments (`snd_wnd`), and what it still allows from the head
    /// buffer's first segment on (`tcp_wnd_end - seq`).
    pub rwnd: u32,
    pub send_window: u32,
    /// The autosized GSO packet, segments (`max_segs`).
    pub max_segs: u32,
    /// The head buffer, segments; whether it is the last of the data (it carries FIN).
    pub buffer: u32,
    pub last_of_data: bool,
    /// When the oldest segment outstanding was (last) sent, if any; the smoothed RTT.
    pub oldest_sent: Option<Time>,
    pub srtt: Option<Time>,
}

/// The answer of [`should_defer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Defer {
    SendNow,
    /// Wait for an ACK; `cwnd_limited`: the window is what holds the buffer back (it counts
    /// as limiting the sender, for window growth).
    Wait {
        cwnd_limited: bool,
    },
}

/// Whether the windows let a whole autosized packet go: then nothing waits (the first rule of
/// [`should_defer`], cheap enough to ask first).
#[inline]
pub fn fits_whole(cwnd: u32, in_flight: u32, send_window: u32, max_segs: u32) -> bool {
    send_window.min(cwnd.saturating_sub(in_flight)) >= max_segs
}

/// `tcp_tso_should_defer` (Linux 6.18, with its fix for large RTTs): whether to hold the head
/// buffer (of more than one segment) for an ACK that will open the window further.
pub fn should_defer(c: &DeferCheck) -> Defer {
    if c.recovering || c.now > c.last_write + RECENT_WRITE {
        return Defer::SendNow;
    }
    let cong_win = c.cwnd.saturating_sub(c.in_flight);
    let limit = c.send_window.min(cong_win);
    // A whole autosized packet fits; or the head buffer does and more data is queued behind
    // it (the model's bulk senders always have more, but the last buffer).
    if fits_whole(c.cwnd, c.in_flight, c.send_window, c.max_segs) || (!c.last_of_data && limit >= c.buffer) {
        return Defer::SendNow;
    }
    // A third of the window (in bytes: min(rwnd, cwnd) / 3, compared with whole segments).
    if limit as u64 * TSO_WIN_DIVISOR as u64 >= c.rwnd.min(c.cwnd) as u64 {
        return Defer::SendNow;
    }
    let Some(oldest) = c.oldest_sent else { return Defer::SendNow };
    // No RTT sample yet: Linux has its handshake's, which the model's long-lived flows do not
    // make; without one, no ACK is known to be near.
    let Some(srtt) = c.srtt else { return Defer::SendNow };
    // The oldest segment's ACK is expected a smoothed RTT after it left: if that is further
    // away than min(srtt / 2, 1 ms), sending now keeps the ACK clock smooth.
    let expected = oldest + srtt;
    let threshold = Time(srtt.0 / 2).min(ACK_WAIT_MAX);
    if expected > c.now + threshold {
        return Defer::SendNow;
    }
    if cong_win < c.send_window {
        if cong_win <= c.buffer {
            return Defer::Wait { cwnd_limited: true };
        }
    } else if c.send_window <= c.buffer {
        return Defer::Wait { cwnd_limited: false };
    }
    // The last buffer gets no more data: no reason to wait.
    if c.last_of_data {
        return Defer::SendNow;
    }
    Defer::Wait { cwnd_limited: false }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1460;

    #[test]
    fn autosize_is_a_millisecond_of_rate_plus_the_short_path_bonus() {
        // 50 Mb/s paced at 120 %: 7.5 MB/s >> 10 = 7,324 B = 5 segments; a 100 ms path adds
        // nothing (195 halvings), a 2 ms one 65,536 >> 3 = 8,192 B more: 10 segments.
        let rate = 7.5e6;
        assert_eq!(autosize(Some(rate), Some(Time::from_ms(100)), MSS, 2, 0), 5);
        assert_eq!(autosize(Some(rate), Some(Time::from_ms(2)), MSS, 2, 0), 10);
        // A slow flow gets the minimum; no rate yet: the whole 64 KB (44 segments).
        assert_eq!(autosize(Some(100e3), Some(Time::from_ms(100)), MSS, 2, 0), 2);
        assert_eq!(autosize(None, None, MSS, 2, 0), 44);
        // The device's limit caps it (gso_max_segs = 1: one segment at a time).
        assert_eq!(autosize(None, None, MSS, 2, 1), 1);
        assert_eq!(autosize(Some(rate), Some(Time::from_ms(2)), MSS, 2, 4), 4);
        // A sub-512-µs path: the whole 64 KB bonus, capped at 64 KB.
        assert_eq!(autosize(Some(rate), Some(Time::from_us(300)), MSS, 2, 0), 44);
    }

    #[test]
    fn the_window_gives_a_packet_at_most_half_of_itself() {
        assert_eq!(cwnd_quota(20, 5), 10);
        assert_eq!(cwnd_quota(20, 15), 5);
        assert_eq!(cwnd_quota(20, 20), 0);
        assert_eq!(cwnd_quota(1, 0), 1);
    }

    fn check() -> DeferCheck {
        // cwnd 30 with 28 out: 2 segments of room, the head buffer 10; the oldest segment left
        // 1.5 ms ago on a 2-ms path: its ACK is due in 0.5 ms.
        let now = Time::from_ms(100);
        DeferCheck {
            now,
            recovering: false,
            last_write: now - Time::from_us(200),
            cwnd: 30,
            in_flight: 28,
            rwnd: 1_000,
            send_window: 1_000,
            max_segs: 10,
            buffer: 10,
            last_of_data: false,
            oldest_sent: Some(now - Time::from_us(1_500)),
            srtt: Some(Time::from_ms(2)),
        }
    }

    #[test]
    fn a_small_room_waits_for_the_ack_due_soon() {
        assert_eq!(should_defer(&check()), Defer::Wait { cwnd_limited: true });
    }

    #[test]
    fn each_rule_that_sends_at_once() {
        let c = check();
        // In recovery; or nothing written in the last millisecond.
        assert_eq!(should_defer(&DeferCheck { recovering: true, ..c }), Defer::SendNow);
        assert_eq!(
            should_defer(&DeferCheck { last_write: c.now - Time::from_us(1_001), ..c }),
            Defer::SendNow
        );
        // A whole autosized packet fits; or the rest of a split buffer does.
        assert_eq!(should_defer(&DeferCheck { in_flight: 20, ..c }), Defer::SendNow);
        assert_eq!(should_defer(&DeferCheck { buffer: 2, ..c }), Defer::SendNow);
        // A third of the window is free (cwnd 6: 2 of 6).
        assert_eq!(should_defer(&DeferCheck { cwnd: 6, in_flight: 4, ..c }), Defer::SendNow);
        // The next ACK is more than min(srtt/2, 1 ms) away: the oldest left 0.5 ms ago.
        assert_eq!(
            should_defer(&DeferCheck { oldest_sent: Some(c.now - Time::from_us(500)), ..c }),
            Defer::SendNow
        );
        // On a 100-ms path the wait is capped at 1 ms, not 50 (the 6.18 fix).
        let long = DeferCheck { srtt: Some(Time::from_ms(100)), ..c };
        assert_eq!(
            should_defer(&DeferCheck { oldest_sent: Some(c.now - Time::from_ms(98)), ..long }),
            Defer::SendNow
        );
        assert_eq!(
            should_defer(&DeferCheck { oldest_sent: Some(c.now - Time::from_us(99_500)), ..long }),
            Defer::Wait { cwnd_limited: true }
        );
        // Nothing outstanding, or no RTT sample: no ACK known to be near.
        assert_eq!(should_defer(&DeferCheck { oldest_sent: None, ..c }), Defer::SendNow);
        assert_eq!(should_defer(&DeferCheck { srtt: None, ..c }), Defer::SendNow);
    }

    #[test]
    fn the_receivers_window_and_the_last_buffer() {
        let c = check();
        // The receiver's window is the smaller: waits, not limited by cwnd.
        assert_eq!(should_defer(&DeferCheck { send_window: 2, ..c }), Defer::Wait { cwnd_limited: false });
        // The last buffer (FIN) that fits is sent; one that does not waits for the window.
        assert_eq!(
            should_defer(&DeferCheck { last_of_data: true, buffer: 2, ..c }),
            Defer::Wait { cwnd_limited: true }
        );
        assert_eq!(
            should_defer(&DeferCheck { last_of_data: true, buffer: 1, in_flight: 28, ..c }),
            Defer::SendNow
        );
    }
}
