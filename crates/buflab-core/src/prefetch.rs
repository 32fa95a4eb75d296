//! Prefetch hints: start loading memory an event is about to touch.

/// Asks the CPU to start loading every cache line of `x` (a hint: no effect on results).
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = x as *const T as *const i8;
        let mut off = 0;
        while off < std::mem::size_of::<T>() {
            // SAFETY: a prefetch is a hint; it never faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(off)) };
            off += 64;
        }
        // A record not aligned to a line may end on one more line than its size spans (a
        // link's 56-byte ring entry straddles two lines in three places of four).
        if std::mem::align_of::<T>() < 64 && std::mem::size_of::<T>() > 0 {
            // SAFETY: as above.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(std::mem::size_of::<T>() - 1)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
