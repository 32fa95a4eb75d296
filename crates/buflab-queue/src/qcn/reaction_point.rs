//! QCN's reaction point (802.1Qau; see [`super`]): the rate limiter at a source.
//!
//! Read first: [`super`]. It is inactive (the source sends at line rate) until the first
//! message. Then, with `CR` the current rate and `TR` the target rate:
//! - **On a message** with quantized feedback `Fb`: `TR ← CR`, `CR ← CR·(1 − Fb/quantization)`
//!   (the standard's `Gd = 1/128`: at most a cut of 63/128, about half), never below the
//!   minimum rate; both counters restart in fast recovery.
//! - **Two counters** mark cycles: a byte counter (a cycle every `byte_counter` bytes sent) and
//!   a timer (a cycle every `timer`); after `fast_recovery` cycles each counts half-length
//!   cycles (`byte_counter/2`, `timer/2`), as the standard's active increase does.
//! - **At the end of each cycle** of either counter, the rate rises: in fast recovery (both
//!   counters at most `fast_recovery` cycles) `CR ← (CR + TR)/2`; in active increase (one
//!   counter past it) first `TR ← TR + R_AI`; in hyper-active increase (both past it)
//!   `TR ← TR + i·R_HAI`, with `i` the fewer cycles either counter has made past fast
//!   recovery. A limiter back at line rate is released.
//!
//! Rates are whole bits per second; the halving rounds up, so a limiter recovering without
//! feedback does reach line rate. It must not know packets, flows or clocks beyond the times
//! it is given: the caller runs the timer (`next_timer`, `on_timer`).

use buflab_base::units::{Rate, Time};

/// A reaction point's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RpSpec {
    /// `1/Gd`: a message of feedback `Fb` cuts the rate by `Fb/quantization` (the standard's
    /// 128; the seed's 1024).
    pub quantization: u32,
    /// Bytes sent per byte-counter cycle (`BC_LIMIT`) in fast recovery.
    pub byte_counter: u64,
    /// The timer's period in fast recovery.
    pub timer: Time,
    /// Cycles of fast recovery.
    pub fast_recovery: u32,
    /// `R_AI`, `R_HAI`: the target's steps in active and hyper-active increase.
    pub r_ai: Rate,
    pub r_hai: Rate,
    /// The lowest rate a cut may reach.
    pub min_rate: Rate,
}

impl RpSpec {
    /// The standard's defaults (see [`super`]).
    pub const STANDARD: RpSpec = RpSpec {
        quantization: 128,
        byte_counter: 150_000,
        timer: Time::from_ms(15),
        fast_recovery: 5,
        r_ai: Rate::mbps(5),
        r_hai: Rate::mbps(50),
        min_rate: Rate::mbps(10),
    };
}

/// Why the rate changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    Feedback,
    ByteCounter,
    Timer,
}

#[derive(Clone, Debug)]
pub struct ReactionPoint {
    spec: RpSpec,
    line: u64,
    active: bool,
    cr: u64,
    tr: u64,
    /// Bytes sent in the byte counter's current cycle, and its cycles since the last message.
    bc_bytes: u64,
    bc_cycles: u32,
    /// When the timer's current cycle began, and its cycles since the last message.
    t_start: Time,
    t_cycles: u32,
    /// Messages heard.
    pub messages: u64,
}

impl ReactionPoint {
    /// A limiter for a source whose line rate is `line` (inactive until the first message).
    pub fn new(spec: RpSpec, line: Rate) -> ReactionPoint {
        assert!(spec.quantization > 0 && spec.byte_counter > 1 && spec.timer > Time::ZERO);
        let line = line.bits_per_s();
        ReactionPoint {
            spec,
            line,
            active: false,
            cr: line,
            tr: line,
            bc_bytes: 0,
            bc_cycles: 0,
            t_start: Time::ZERO,
            t_cycles: 0,
            messages: 0,
        }
    }

    /// The rate it limits to (the line rate when inactive).
    pub fn rate(&self) -> Rate {
        Rate::bps(self.cr)
    }

    /// The target rate it recovers towards.
    pub fn target(&self) -> Rate {
        Rate::bps(self.tr)
    }

    pub fn is_active(&self) -> bool {
        self.active
    }

    /// A message with quantized feedback `fb` arrives at `now`.
    pub fn on_feedback(&mut self, now: Time, fb: u8) {
        self.messages += 1;
        if !self.active {
            self.active = true;
            (self.cr, self.tr) = (self.line, self.line);
        }
        self.tr = self.cr;
        let cut = self.cr as u128 * u128::from(fb) / u128::from(self.spec.quantization);
        self.cr = (self.cr - (cut as u64).min(self.cr)).max(self.spec.min_rate.bits_per_s());
        (self.bc_bytes, self.bc_cycles, self.t_cycles, self.t_start) = (0, 0, 0, now);
    }

    /// `bytes` left at the limited rate: true if a byte-counter cycle ended (the rate changed).
    pub fn on_sent(&mut self, bytes: u64) -> bool {
        if !self.active {
            return false;
        }
        self.bc_bytes += bytes;
        let mut changed = false;
        while self.active && self.bc_bytes >= self.bc_limit() {
            self.bc_bytes -= self.bc_limit();
            self.bc_cycles += 1;
            self.increase();
            changed = true;
        }
        changed
    }

    /// When the timer's current cycle ends, if the limiter is active.
    pub fn next_timer(&self) -> Option<Time> {
        self.active.then(|| {
            let period = if self.t_cycles < self.spec.fast_recovery {
                self.spec.timer
            } else {
                Time(self.spec.timer.0 / 2)
            };
            self.t_start + period
        })
    }

    /// The timer's cycle ends at `now` (= [`ReactionPoint::next_timer`]).
    pub fn on_timer(&mut self, now: Time) {
        debug_assert_eq!(self.next_timer(), Some(now));
        self.t_cycles += 1;
        self.t_start = now;
        self.increase();
    }

    fn bc_limit(&self) -> u64 {
        if self.bc_cycles < self.spec.fast_recovery {
            self.spec.byte_counter
        } else {
            self.spec.byte_counter / 2
        }
    }

    /// The end of a cycle of either counter.
    fn increase(&mut self) {
        let fr = self.spec.fast_recovery;
        let (bc, t) = (self.bc_cycles, self.t_cycles);
        if bc > fr && t > fr {
            let i = u64::from(bc.min(t) - fr);
            self.tr += i * self.spec.r_hai.bits_per_s();
        } else if bc > fr || t > fr {
            self.tr += self.spec.r_ai.bits_per_s();
        }
        self.tr = self.tr.min(self.line);
        self.cr = (self.cr + self.tr).div_ceil(2);
        if self.cr >= self.line {
            self.active = false;
            (self.cr, self.tr) = (self.line, self.line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GBPS: u64 = 1_000_000_000;

    fn rp() -> ReactionPoint {
        ReactionPoint::new(RpSpec::STANDARD, Rate::gbps(1))
    }

    #[test]
    fn a_message_cuts_by_feedback_over_the_quantization() {
        let mut r = rp();
        assert!(!r.is_active() && r.next_timer().is_none());
        // 1 Gb/s, Fb = 32: cut 32/128 = 25 %.
        r.on_feedback(Time::from_ms(1), 32);
        assert_eq!((r.rate().bits_per_s(), r.target().bits_per_s()), (750_000_000, GBPS));
        // Again, Fb = 63: 750 Mb/s · 63/128 = 369,140,625 off; the target is the rate before.
        r.on_feedback(Time::from_ms(2), 63);
        assert_eq!((r.rate().bits_per_s(), r.target().bits_per_s()), (380_859_375, 750_000_000));
        // The seed's scale 1024: the same message cuts eight times less.
        let mut s = ReactionPoint::new(RpSpec { quantization: 1024, ..RpSpec::STANDARD }, Rate::gbps(1));
        s.on_feedback(Time::ZERO, 32);
        assert_eq!(s.rate().bits_per_s(), GBPS - GBPS / 32);
        // Never below the minimum rate.
        let mut m = ReactionPoint::new(RpSpec { quantization: 1, ..RpSpec::STANDARD }, Rate::gbps(1));
        m.on_feedback(Time::ZERO, 63);
        assert_eq!(m.rate(), Rate::mbps(10));
    }

    #[test]
    fn fast_recovery_halves_the_gap_each_cycle_then_active_increase_raises_the_target() {
        let mut r = rp();
        // Two cuts, so that the target (the rate before the last) is below line rate; then
        // recover by the byte counter alone.
        r.on_feedback(Time::ZERO, 63);
        r.on_feedback(Time::ZERO, 63);
        let (cr0, tr) = (r.rate().bits_per_s(), r.target().bits_per_s());
        let mut cr = cr0;
        for cycle in 1..=5 {
            assert!(r.on_sent(150_000), "cycle {cycle} ends after 150 KB");
            cr = (cr + tr).div_ceil(2);
            assert_eq!((r.rate().bits_per_s(), r.target().bits_per_s()), (cr, tr), "cycle {cycle}");
        }
        // Past fast recovery: half-length cycles, and each raises the target by R_AI first.
        assert!(!r.on_sent(74_999));
        assert!(r.on_sent(1));
        let tr = tr + 5_000_000;
        assert_eq!((r.rate().bits_per_s(), r.target().bits_per_s()), ((cr + tr).div_ceil(2), tr));
    }

    #[test]
    fn the_timer_runs_full_cycles_in_fast_recovery_then_half_and_both_past_it_hyper_increase() {
        let mut r = rp();
        r.on_feedback(Time::from_ms(100), 63);
        r.on_feedback(Time::from_ms(100), 63);
        let mut t = Time::from_ms(100);
        for _ in 0..5 {
            t += Time::from_ms(15);
            assert_eq!(r.next_timer(), Some(t));
            r.on_timer(t);
        }
        // Active increase by the timer: 7.5 ms cycles, target + R_AI.
        assert_eq!(r.next_timer(), Some(t + Time::from_us(7500)));
        let tr = r.target().bits_per_s();
        r.on_timer(t + Time::from_us(7500));
        assert_eq!(r.target().bits_per_s(), tr + 5_000_000);
        // Now the byte counter: its first five cycles (150 KB each) are active increase, the
        // timer being past fast recovery (+ R_AI each); its sixth (75 KB) puts both past it:
        // hyper-active increase with i = min(6, 6) - 5 = 1 (+ R_HAI).
        let tr = r.target().bits_per_s();
        r.on_sent(5 * 150_000 + 75_000);
        assert_eq!(r.target().bits_per_s(), tr + 5 * 5_000_000 + 50_000_000);
    }

    #[test]
    fn without_feedback_the_limiter_returns_to_line_rate_and_is_released() {
        let mut r = rp();
        r.on_feedback(Time::ZERO, 63);
        let mut n = 0;
        while r.is_active() {
            r.on_sent(75_000);
            n += 1;
            assert!(n < 1000, "the limiter never recovered");
        }
        assert_eq!(r.rate(), Rate::gbps(1));
        assert!(r.next_timer().is_none());
        assert!(!r.on_sent(1_000_000), "a released limiter counts nothing");
    }
}
