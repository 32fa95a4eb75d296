//! The two shapes every system call here takes: a result that is negative on failure (with
//! the call named in the error), and an integer socket option.
//!
//! Read first: nothing.

use std::io;

/// `r`, or the OS error of the call `what` when it is negative.
pub fn check(r: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if r < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what}: {e}")))
    } else {
        Ok(r)
    }
}

/// Sets the socket option (`level`, `opt`) of `fd` to `v`, a value of any plain type.
pub fn set_opt<T>(
    fd: libc::c_int,
    level: libc::c_int,
    opt: libc::c_int,
    v: &T,
    what: &str,
) -> io::Result<()> {
    // SAFETY: setsockopt reads size_of::<T>() bytes from `v`.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            v as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as u32,
        )
    };
    check(r, what).map(|_| ())
}

/// Sets an integer socket option.
pub fn set_int(
    fd: libc::c_int,
    level: libc::c_int,
    opt: libc::c_int,
    v: libc::c_int,
    what: &str,
) -> io::Result<()> {
    set_opt(fd, level, opt, &v, what)
}
