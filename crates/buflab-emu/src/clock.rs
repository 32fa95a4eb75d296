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
/// on a received frame (real time) into the loop's clock. Both are read back to back; the
/// difference moves only when the real-time clock is stepped or slewed.
pub fn realtime_ahead_ps() -> i128 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: as in `now`; CLOCK_REALTIME always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    let real = ts.tv_sec as i128 * 1_000_000_000_000 + ts.tv_nsec as i128 * 1_000;
    real - now().ps() as i128
}
