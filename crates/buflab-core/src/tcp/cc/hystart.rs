//! How slow start ends: at ssthresh or a loss alone (RFC 5681), or earlier on a rising RTT —
//! HyStart as Linux's CUBIC runs it, or HyStart++ (RFC 9406).
//!
//! Read first: RFC 9406 §4 and Linux's `tcp_cubic.c` (`hystart_update`, `cubictcp_acked`).
//! Owns the round-by-round RTT bookkeeping of both; must not know the window arithmetic of
//! congestion avoidance or loss recovery: the sender asks, on each ACK in slow start, whether
//! slow start goes on, goes on conservatively (HyStart++'s CSS), or ends (ssthresh = cwnd), and
//! grows the window accordingly.
//!
//! A round begins when the cumulative ACK passes the highest segment sent when the last one
//! began (RFC 9406's windowEnd, Linux's `end_seq`). Both look at the smallest RTT sample of
//! each round: an RTT that has risen by clamp(min RTT / 8, 4 ms, 16 ms) over the round's first
//! 8 samples means the bottleneck queue is filling, and slow start should end before it
//! overflows:
//! - **HyStart** (`tcp_cubic.c`, Linux's default for CUBIC, from a window of 16 segments on):
//!   delay detection compares the round's minimum with the connection's minimum RTT
//!   (`delay_min`) and ends slow start at once (ssthresh = cwnd); ACK-train detection ends it
//!   when ACKs keep arriving at most 2 ms apart for longer than half the minimum RTT
//!   (`hystart_ack_delta_us`, and `threshold >>= 1` for an unpaced sender; the pacing-rate
//!   term `hystart_ack_delay` is at most 1 ms and is left out), a window that already spans
//!   half the path. It runs in every slow start (Linux re-arms it after a timeout).
//! - **HyStart++** (RFC 9406 §4.2): delay detection compares the round's minimum with the last
//!   round's, and moves to Conservative Slow Start (CSS) rather than ending: the window grows a
//!   quarter as fast (`CSS_GROWTH_DIVISOR`) for at most `CSS_ROUNDS` rounds, then slow start
//!   ends; a round whose minimum falls back below the one that started CSS resumes slow start
//!   (the rise was jitter). Only the first slow start of a connection uses it (§4.3: later ones
//!   are bounded by the ssthresh a loss set). The growth per ACK is limited to L = 8 segments
//!   for an unpaced sender (∞ when paced).
//!
//! The RTT sample of an ACK is the sender's (the Linux sender takes one from every ACK; see
//! [`crate::tcp::linux`]).

use crate::units::Time;

/// Which slow start a flow runs (`slow_start` of `traffic.tcp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlowStart {
    /// RFC 5681 §3.1: until ssthresh or the first loss.
    Standard,
    /// Linux CUBIC's HyStart (ACK train and delay).
    Hystart,
    /// RFC 9406.
    HystartPlusPlus,
}

crate::names::names!(SlowStart { Standard = "standard", Hystart = "hystart", HystartPlusPlus = "hystart++" });

/// RFC 9406 §4.3 and `tcp_cubic.c`: the bounds of the RTT rise that ends slow start.
pub const MIN_RTT_THRESH: Time = Time::from_ms(4);
pub const MAX_RTT_THRESH: Time = Time::from_ms(16);
/// The rise threshold is the reference RTT over this (RFC 9406 `MIN_RTT_DIVISOR`, Linux
/// `delay_min >> 3`).
pub const MIN_RTT_DIVISOR: u64 = 8;
/// RTT samples a round needs before its minimum counts (`N_RTT_SAMPLE`,
/// `HYSTART_MIN_SAMPLES`).
pub const N_RTT_SAMPLE: u32 = 8;
/// RFC 9406: CSS grows the window this many times slower, for at most this many rounds.
pub const CSS_GROWTH_DIVISOR: f64 = 4.0;
pub const CSS_ROUNDS: u32 = 5;
/// RFC 9406: an unpaced sender grows by at most L segments per ACK.
pub const L_UNPACED: u32 = 8;
/// Linux `hystart_low_window`: HyStart looks only once cwnd is this large.
pub const LOW_WINDOW: f64 = 16.0;
/// Linux `hystart_ack_delta_us`: ACKs this close together belong to one train.
pub const ACK_DELTA: Time = Time::from_ms(2);

/// clamp(rtt / 8, 4 ms, 16 ms).
fn rtt_thresh(rtt: Time) -> Time {
    Time(rtt.0 / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH)
}

/// What slow start does on an ACK.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// Slow start goes on: grow by what the ACK delivered, at most `limit` segments.
    Grow { limit: u32 },
    /// HyStart++'s CSS: grow by what the ACK delivered (at most `limit`) / `CSS_GROWTH_DIVISOR`.
    Conservative { limit: u32 },
    /// Slow start ends here: ssthresh = cwnd.
    Exit,
}

/// The state of HyStart or HyStart++ for one connection.
#[derive(Clone, Debug, PartialEq)]
pub struct HyStart {
    kind: SlowStart,
    /// The segment whose acknowledgement ends the round (one past the highest sent when it
    /// began), and when it began; None before the first ACK.
    round_end: Option<u32>,
    round_start: Time,
    /// The last ACK of the current train (Linux `last_ack`).
    last_ack: Time,
    /// The smallest RTT of this round and of the last, the samples this round.
    current_min: Option<Time>,
    last_round_min: Option<Time>,
    samples: u32,
    /// The smallest RTT of the connection (Linux `delay_min`).
    delay_min: Option<Time>,
    /// CSS: the minimum that started it, and the rounds begun in it.
    css: Option<(Time, u32)>,
    /// Slow start ended by delay or a loss: HyStart++ is done for this connection; Linux's
    /// HyStart waits for the next slow start (`found`).
    done: bool,
    paced: bool,
}

impl HyStart {
    /// The state for `kind`, or None for standard slow start.
    pub fn new(kind: SlowStart, paced: bool) -> Option<HyStart> {
        (kind != SlowStart::Standard).then_some(HyStart {
            kind,
            round_end: None,
            round_start: Time::ZERO,
            last_ack: Time::ZERO,
            current_min: None,
            last_round_min: None,
            samples: 0,
            delay_min: None,
            css: None,
            done: false,
            paced,
        })
    }

    fn limit(&self) -> u32 {
        if self.kind == SlowStart::HystartPlusPlus && !self.paced {
            L_UNPACED
        } else {
            u32::MAX
        }
    }

    /// Whether the connection is in HyStart++'s CSS.
    pub fn in_css(&self) -> bool {
        self.css.is_some()
    }

    /// A loss (or ECN-Echo) ended slow start, or a timeout restarts it.
    pub fn on_congestion(&mut self, timeout: bool) {
        self.css = None;
        match self.kind {
            // §4.3: only the first slow start.
            SlowStart::HystartPlusPlus => self.done = true,
            // Linux `cubictcp_state(TCP_CA_Loss)`: HyStart re-arms after a timeout.
            _ => self.done = !timeout,
        }
        self.round_end = None;
    }

    /// An ACK in slow start at `now` moved the cumulative ACK to `una`, with `nxt` the next
    /// segment to send, RTT sample `rtt` (the most recently sent segment it delivered) and
    /// window `cwnd`. Says what slow start does.
    pub fn on_ack(&mut self, now: Time, una: u32, nxt: u32, rtt: Option<Time>, cwnd: f64) -> Step {
        let limit = self.limit();
        if self.done {
            return Step::Grow { limit };
        }
        if let Some(r) = rtt {
            self.delay_min = Some(self.delay_min.map_or(r, |m| m.min(r)));
        }
        // A new round (RFC 9406: at windowEnd; Linux: `after(ack, end_seq)` resets).
        if self.round_end.is_none_or(|end| una > end) {
            self.round_end = Some(nxt);
            self.round_start = now;
            self.last_ack = now;
            self.last_round_min = self.current_min;
            self.current_min = None;
            self.samples = 0;
            if let Some((_, rounds)) = &mut self.css {
                *rounds += 1;
                if *rounds >= CSS_ROUNDS {
                    // §4.2: CSS_ROUNDS rounds of CSS (the partial first one counted): end.
                    self.css = None;
                    self.done = true;
                    return Step::Exit;
                }
            }
        }
        match self.kind {
            SlowStart::Hystart => self.linux_hystart(now, rtt, cwnd),
            _ => self.hystart_plus_plus(rtt),
        }
    }

    /// Linux `hystart_update`.
    fn linux_hystart(&mut self, now: Time, rtt: Option<Time>, cwnd: f64) -> Step {
        let grow = Step::Grow { limit: u32::MAX };
        if cwnd < LOW_WINDOW {
            return grow;
        }
        let Some(delay_min) = self.delay_min else { return grow };
        // ACK train: ACKs no more than 2 ms apart since the round began, for longer than half
        // the minimum RTT.
        if now - self.last_ack <= ACK_DELTA {
            self.last_ack = now;
            if now - self.round_start > Time(delay_min.0 / 2) {
                self.done = true;
                return Step::Exit;
            }
        }
        // Delay: the round's minimum over its first 8 samples, against the connection's.
        if let Some(r) = rtt {
            self.current_min = Some(self.current_min.map_or(r, |m| m.min(r)));
            if self.samples < N_RTT_SAMPLE {
                self.samples += 1;
            } else if self.current_min.is_some_and(|m| m > delay_min + rtt_thresh(delay_min)) {
                self.done = true;
                return Step::Exit;
            }
        }
        grow
    }

    /// RFC 9406 §4.2.
    fn hystart_plus_plus(&mut self, rtt: Option<Time>) -> Step {
        let limit = self.limit();
        if let Some(r) = rtt {
            self.current_min = Some(self.current_min.map_or(r, |m| m.min(r)));
            self.samples += 1;
        }
        let enough = self.samples >= N_RTT_SAMPLE;
        match (self.css, self.current_min, self.last_round_min) {
            (None, Some(cur), Some(last)) if enough && cur >= last + rtt_thresh(last) => {
                // The RTT rose: Conservative Slow Start, with this round's minimum as baseline.
                self.css = Some((cur, 0));
                Step::Conservative { limit }
            }
            (Some((base, _)), Some(cur), _) if enough && cur < base => {
                // The rise was spurious: back to slow start (HyStart++ still on).
                self.css = None;
                Step::Grow { limit }
            }
            (Some(_), _, _) => Step::Conservative { limit },
            _ => Step::Grow { limit },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::from_ms(x)
    }

    /// Plays `rounds` rounds of `acks` ACKs each, one ACK per ms, every sample `rtt(round)`;
    /// round k covers segments k·acks..(k+1)·acks. Returns each ACK's step.
    fn play(h: &mut HyStart, rounds: u32, acks: u32, rtt: impl Fn(u32) -> Time) -> Vec<Step> {
        let mut steps = Vec::new();
        let mut t = ms(1000);
        for k in 0..rounds {
            for i in 0..acks {
                t += ms(1);
                let una = k * acks + i + 1;
                steps.push(h.on_ack(t, una, (k + 1) * acks, Some(rtt(k)), 32.0));
            }
        }
        steps
    }

    #[test]
    fn rtt_threshold_is_an_eighth_of_the_rtt_within_4_and_16_ms() {
        assert_eq!(rtt_thresh(ms(10)), ms(4));
        assert_eq!(rtt_thresh(ms(80)), ms(10));
        assert_eq!(rtt_thresh(ms(500)), ms(16));
    }

    #[test]
    fn hystart_plus_plus_enters_css_when_a_round_min_rises_by_the_threshold() {
        // 100 ms, then 112 ms: a rise of 12 ≥ max(4, min(100/8, 16)) = 12.5? No: 12 < 12.5,
        // slow start goes on; 113 ms (13 ≥ 12.5) enters CSS after the round's 8th sample.
        let mut h = HyStart::new(SlowStart::HystartPlusPlus, false).unwrap();
        let steps = play(&mut h, 2, 10, |k| if k == 0 { ms(100) } else { ms(112) });
        assert!(steps.iter().all(|s| *s == Step::Grow { limit: 8 }));
        let mut h = HyStart::new(SlowStart::HystartPlusPlus, false).unwrap();
        let steps = play(&mut h, 2, 10, |k| if k == 0 { ms(100) } else { ms(113) });
        // Round 2's 8th ACK (index 17) is the first with enough samples.
        assert_eq!(steps[16], Step::Grow { limit: 8 });
        assert_eq!(steps[17], Step::Conservative { limit: 8 });
        assert!(h.in_css());
    }

    #[test]
    fn css_lasts_css_rounds_rounds_then_slow_start_ends() {
        // The partial round CSS began in counts: entered in round 1, rounds 2..5 begin in CSS,
        // and the start of round 6 (the 5th begun in CSS) ends slow start.
        let mut h = HyStart::new(SlowStart::HystartPlusPlus, false).unwrap();
        let steps = play(&mut h, 7, 10, |k| if k == 0 { ms(100) } else { ms(120) });
        let exit = steps.iter().position(|s| *s == Step::Exit).unwrap();
        assert_eq!(exit, 60);
        assert!(steps[18..60].iter().all(|s| *s == Step::Conservative { limit: 8 }));
        // After it: HyStart++ is done for the connection (§4.3), slow start is plain.
        assert!(steps[61..].iter().all(|s| *s == Step::Grow { limit: 8 }));
    }

    #[test]
    fn a_round_back_below_the_baseline_resumes_slow_start() {
        let mut h = HyStart::new(SlowStart::HystartPlusPlus, true).unwrap();
        let rtt = |k| match k {
            0 => ms(100),
            1 => ms(120),
            _ => ms(101),
        };
        let steps = play(&mut h, 4, 10, rtt);
        // Paced: no limit. CSS from round 1's 8th sample, then round 2's minimum (101 < 120)
        // resumes slow start at its 8th sample.
        assert_eq!(steps[17], Step::Conservative { limit: u32::MAX });
        assert_eq!(steps[26], Step::Conservative { limit: u32::MAX });
        assert_eq!(steps[27], Step::Grow { limit: u32::MAX });
        assert!(!h.in_css());
    }

    #[test]
    fn linux_hystart_exits_on_delay_against_the_connection_minimum() {
        // Samples 1 ms apart would also form an ACK train: space them 3 ms apart.
        let mut h = HyStart::new(SlowStart::Hystart, false).unwrap();
        let mut t = ms(1000);
        let mut step = Step::Grow { limit: u32::MAX };
        for i in 0..9 {
            t += ms(3);
            step = h.on_ack(t, 1 + i, 100, Some(ms(100) + ms(13)), 32.0);
            if i == 0 {
                // The connection's minimum so far is this sample: no rise yet.
                assert_eq!(step, Step::Grow { limit: u32::MAX });
            }
        }
        // Linux waits for 8 samples, then compares: 113 > 113 + thresh? No.
        assert_eq!(step, Step::Grow { limit: u32::MAX });
        let mut h = HyStart::new(SlowStart::Hystart, false).unwrap();
        let _ = h.on_ack(ms(1), 1, 1, Some(ms(100)), 32.0); // delay_min 100 ms, a round of its own
        let mut t = ms(1);
        let mut steps = Vec::new();
        for i in 0..10 {
            t += ms(3);
            steps.push(h.on_ack(t, 2 + i, 200, Some(ms(113)), 32.0));
        }
        // 113 > 100 + 12.5 once the round has its 8 samples (the 9th call counts past them).
        assert_eq!(steps.iter().position(|s| *s == Step::Exit), Some(8));
    }

    #[test]
    fn linux_hystart_exits_on_an_ack_train_longer_than_half_the_min_rtt() {
        // ACKs 1 ms apart (a train), min RTT 40 ms: the train passes 20 ms at its 21st ACK.
        let mut h = HyStart::new(SlowStart::Hystart, false).unwrap();
        let mut t = ms(1000);
        let first = h.on_ack(t, 1, 100, Some(ms(40)), 32.0);
        assert_eq!(first, Step::Grow { limit: u32::MAX });
        let mut n = 0;
        loop {
            t += ms(1);
            n += 1;
            if h.on_ack(t, 1 + n, 100, Some(ms(40)), 32.0) == Step::Exit {
                break;
            }
        }
        assert_eq!(n, 21);
        // Below the low window (16 segments) it never looks.
        let mut h = HyStart::new(SlowStart::Hystart, false).unwrap();
        let mut t = ms(1000);
        for n in 0..100 {
            t += ms(1);
            assert_eq!(h.on_ack(t, 1 + n, 200, Some(ms(40)), 15.0), Step::Grow { limit: u32::MAX });
        }
    }
}
