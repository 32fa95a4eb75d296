//! The datapath's clock: CLOCK_MONOTONIC in picoseconds, the simulator's unit.
//!
//! Read first: nothing. Logic that needs time takes it as an argument, so tests drive it with
//! made-up times; only the loop reads this clock.

use buflab_base::units::Time;

/// Now, on the monotonic clock.
pub fn now() -> Time {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    Time(ts.tv_sec as u64 * 1_000_000_000_000 + ts.tv_nsec as u64 * 1_000)
}

/// The real-time clock minus the monotonic one, in picoseconds: what turns the kernel's stamp
/// on a received frame (real time) into the loop's clock. The real-time clock is read between
/// two readings of the monotonic one, and the tightest of a few such brackets is kept: a
/// thread preempted between two readings would otherwise be off by as long as it was away.
/// The difference moves only when the real-time clock is stepped or slewed. Returns the
/// difference and how far off it may be (half the kept bracket).
pub fn realtime_ahead_ps() -> (i128, i128) {
    let real = || {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: as in `now`; CLOCK_REALTIME always exists.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
        ts.tv_sec as i128 * 1_000_000_000_000 + ts.tv_nsec as i128 * 1_000
    };
    let mut best: Option<(i128, i128)> = None;
    for _ in 0..5 {
        let before = now().ps() as i128;
        let r = real();
        let after = now().ps() as i128;
        let width = after - before;
        if best.is_none_or(|(w, _)| width < w) {
            best = Some((width, r - (before + after) / 2));
        }
    }
    let (width, ahead) = best.expect("five readings");
    (ahead, width / 2)
}
