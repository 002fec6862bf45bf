//! Closing every file descriptor of a process forked from one with threads (the supervisor,
//! `launch/supervise.rs`), without allocating: only async-signal-safe calls.
//!
//! Three ways, the first that works: `close_range` (Linux 5.9) closes all at once; else the
//! descriptors that `/proc/self/fd` lists, read with `getdents64` into a buffer on the stack;
//! else `close` on every number up to the limit of open files (at most [`MAX_FD_CLOSED`]),
//! which misses a descriptor above the limit — one opened before the limit was lowered, or any
//! past [`MAX_FD_CLOSED`] — and so is left for a system without `/proc`. A descriptor left
//! open in the supervisor can be the channel on which `std` learns that `exec` succeeded:
//! `spawn` would then wait until the rank ends.

unsafe extern "C" {
    fn syscall(number: i64, ...) -> i64;
    fn open(path: *const std::ffi::c_char, flags: i32, ...) -> i32;
    fn lseek(fd: i32, offset: i64, whence: i32) -> i64;
    fn close(fd: i32) -> i32;
    fn getrlimit(resource: i32, limit: *mut [u64; 2]) -> i32;
    fn __errno_location() -> *mut i32;
}

const EINTR: i32 = 4;
const RLIMIT_NOFILE: i32 = 7;
/// `close_range(2)` (Linux 5.9): the same number on every architecture.
const SYS_CLOSE_RANGE: i64 = 436;
/// Where closing one descriptor at a time stops, on kernels without `close_range` and without
/// `/proc`.
const MAX_FD_CLOSED: u64 = 1 << 16;
/// `getdents64(2)`: 217 on x86-64, 61 in the table that newer architectures share; elsewhere
/// `/proc/self/fd` is not listed.
#[cfg(target_arch = "x86_64")]
const SYS_GETDENTS64: Option<i64> = Some(217);
#[cfg(any(
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "loongarch64"
))]
const SYS_GETDENTS64: Option<i64> = Some(61);
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "loongarch64"
)))]
const SYS_GETDENTS64: Option<i64> = None;
/// The bytes of `/proc/self/fd` read at a time, on the stack (the supervisor must not
/// allocate): 170 descriptors or more.
const DIRENT_BYTES: usize = 4096;
/// Where a `linux_dirent64`'s length (`d_reclen`, 2 bytes) and name are.
const DIRENT_RECLEN: usize = 16;
const DIRENT_NAME: usize = 19;
const O_RDONLY: i32 = 0;
const SEEK_SET: i32 = 0;

/// Closes every file descriptor of this process: with `close_range`, else those that
/// `/proc/self/fd` lists, else one at a time up to the limit of open files.
///
/// # Safety
/// Only in the supervisor, which uses none.
pub unsafe fn close_every_fd() {
    // SAFETY: `close_range(0, ~0, 0)`; where the kernel lacks it, `close` on descriptors of
    // this process.
    unsafe {
        if syscall(SYS_CLOSE_RANGE, 0u64, u64::from(u32::MAX), 0u64) == 0 || close_listed_fds() {
            return;
        }
        let mut limit = [MAX_FD_CLOSED; 2];
        getrlimit(RLIMIT_NOFILE, &mut limit);
        for fd in 0..limit[0].min(MAX_FD_CLOSED) {
            close(fd as i32);
        }
    }
}

/// Closes every descriptor that `/proc/self/fd` lists, however high; `false` where it cannot
/// be listed (no `/proc`), or could not be read to its end.
///
/// Closing changes the listing under the reader, so it is read again from the start after a
/// pass that closed anything, until one closes nothing: each pass closes one at least, so it
/// ends. No allocation: entries are read into a buffer on the stack.
///
/// # Safety
/// Only in the supervisor (or a fork about to `exec`), which uses none of them.
unsafe fn close_listed_fds() -> bool {
    let Some(getdents64) = SYS_GETDENTS64 else {
        return false;
    };
    // SAFETY: a path with its NUL; async-signal-safe calls on this process's descriptors.
    unsafe {
        let dir = open(c"/proc/self/fd".as_ptr(), O_RDONLY);
        if dir < 0 {
            return false;
        }
        let mut buf = [0u8; DIRENT_BYTES];
        let mut closed_any = false;
        let listed = loop {
            let read = syscall(
                getdents64,
                i64::from(dir),
                buf.as_mut_ptr(),
                DIRENT_BYTES as u64,
            );
            if read < 0 {
                if *__errno_location() == EINTR {
                    continue;
                }
                break false;
            }
            if read == 0 {
                if !closed_any {
                    break true;
                }
                if lseek(dir, 0, SEEK_SET) != 0 {
                    break false;
                }
                closed_any = false;
                continue;
            }
            for_each_fd(&buf[..read as usize], |fd| {
                if fd != dir {
                    close(fd);
                    closed_any = true;
                }
            });
        };
        close(dir);
        listed
    }
}

/// Calls `f` with the descriptor each `linux_dirent64` in `entries` names (`.` and `..` are
/// skipped).
fn for_each_fd(entries: &[u8], mut f: impl FnMut(i32)) {
    let mut at = 0;
    while let Some(len) = entries.get(at + DIRENT_RECLEN..at + DIRENT_RECLEN + 2) {
        let len = usize::from(u16::from_ne_bytes([len[0], len[1]]));
        let Some(entry) = entries.get(at..at + len).filter(|_| len > DIRENT_NAME) else {
            return;
        };
        let name = &entry[DIRENT_NAME..];
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
        if let Some(fd) = fd_named(name) {
            f(fd);
        }
        at += len;
    }
}

/// The descriptor a name in `/proc/self/fd` stands for: its decimal digits.
fn fd_named(name: &[u8]) -> Option<i32> {
    if name.is_empty() {
        return None;
    }
    name.iter().try_fold(0i32, |fd, &b| {
        if !b.is_ascii_digit() {
            return None;
        }
        fd.checked_mul(10)?.checked_add(i32::from(b - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{self, Read};
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    use std::time::Duration;

    unsafe extern "C" {
        fn dup2(old: i32, new: i32) -> i32;
        fn setrlimit(resource: i32, limit: *const [u64; 2]) -> i32;
    }

    /// A child killed and reaped when dropped: a failed test leaves nothing running.
    struct Reaped(std::process::Child);

    impl Drop for Reaped {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    /// The listing closes a descriptor wherever it is. The loop of kernels without
    /// `close_range` stopped at the limit of open files (and at [`MAX_FD_CLOSED`]), but a
    /// descriptor opened before the limit was lowered stays open above it: here a copy of a
    /// pipe's write end near the hard limit, in a child that then lowers its limit to
    /// [`LOW_LIMIT`], closes, and runs `sleep`: the pipe ends while `sleep` runs.
    #[test]
    fn the_listing_closes_a_descriptor_above_the_limit() {
        /// The child's limit of open files when it closes: the loop's stop.
        const LOW_LIMIT: u64 = 64;
        let mut limit = [0u64; 2];
        // SAFETY: writes the limit into `limit`.
        unsafe { getrlimit(RLIMIT_NOFILE, &mut limit) };
        let high = limit[1].saturating_sub(1).min(1 << 20) as i32;
        assert!(
            high as u64 > LOW_LIMIT,
            "hard limit of open files {}",
            limit[1]
        );
        let (mut reader, writer) = std::io::pipe().unwrap();
        let w = writer.as_raw_fd();
        let mut cmd = Command::new("sleep");
        cmd.arg("30")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: in the child before `exec`: `setrlimit`, `dup2` and the listing, all
        // async-signal-safe; errors without allocating.
        unsafe {
            cmd.pre_exec(move || {
                setrlimit(RLIMIT_NOFILE, &[limit[1], limit[1]]);
                // Not close-on-exec, unlike `w`: only the listing can close it.
                if dup2(w, high) != high {
                    return Err(io::Error::last_os_error());
                }
                setrlimit(RLIMIT_NOFILE, &[LOW_LIMIT, limit[1]]);
                if !close_listed_fds() {
                    return Err(io::Error::from_raw_os_error(2)); // ENOENT: no listing
                }
                Ok(())
            });
        }
        let mut sleep = Reaped(cmd.spawn().unwrap());
        drop(writer);
        let (ended, end) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = reader.read_to_end(&mut Vec::new());
            let _ = ended.send(());
        });
        let closed = end.recv_timeout(Duration::from_secs(5)).is_ok();
        let running = sleep.0.try_wait().unwrap().is_none();
        assert!(running, "sleep did not run: the child failed before exec");
        assert!(closed, "descriptor {high} stayed open in the child");
    }

    #[test]
    fn descriptors_are_read_from_their_names() {
        assert_eq!(fd_named(b"0"), Some(0));
        assert_eq!(fd_named(b"100000"), Some(100_000));
        for not_one in [&b""[..], b".", b"..", b"1a", b"99999999999"] {
            assert_eq!(fd_named(not_one), None, "{not_one:?}");
        }
    }
}
