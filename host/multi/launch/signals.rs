//! The launcher's signals: Ctrl-C, `kill` and a closed terminal stop the ranks rather than the
//! launcher alone; a rank's process group is signalled; a rank is looked at without reaping it.

/// `SIGTERM`: asks a rank to end.
pub const SIGTERM: i32 = 15;
/// `SIGKILL`: ends a rank.
pub const SIGKILL: i32 = 9;

#[cfg(unix)]
pub use unix::*;

#[cfg(unix)]
mod unix {
    use super::SIGTERM;
    use std::sync::atomic::{AtomicI32, Ordering};

    /// The signal that asked the launcher to stop, or 0.
    static CAUGHT: AtomicI32 = AtomicI32::new(0);

    unsafe extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
        fn kill(pid: i32, sig: i32) -> i32;
        #[cfg(target_os = "linux")]
        fn waitid(idtype: u32, id: u32, infop: *mut [i32; 32], options: i32) -> i32;
    }
    const SIGHUP: i32 = 1;
    const SIGINT: i32 = 2;
    const SIGPIPE: i32 = 13;
    /// `SIG_IGN`.
    const IGNORE: usize = 1;

    extern "C" fn note(sig: i32) {
        // Only an atomic store: async-signal-safe.
        CAUGHT.store(sig, Ordering::SeqCst);
    }

    /// The launcher's handlers while it runs; the ones before are put back on drop.
    pub struct Caught {
        before: Vec<(i32, usize)>,
    }

    /// From now until the guard drops, SIGHUP, SIGINT and SIGTERM are noted (see [`caught`])
    /// rather than ending the launcher — which would leave the ranks, in process groups of their
    /// own, running until their supervisors noticed — and SIGPIPE (a reader of the output gone)
    /// is ignored: the output's writes fail instead.
    pub fn catch() -> Caught {
        CAUGHT.store(0, Ordering::SeqCst);
        let note = note as extern "C" fn(i32) as usize;
        let before = [
            (SIGHUP, note),
            (SIGINT, note),
            (SIGTERM, note),
            (SIGPIPE, IGNORE),
        ]
        .into_iter()
        // SAFETY: installs a handler that only stores to an atomic, or ignores the signal.
        .map(|(sig, h)| (sig, unsafe { signal(sig, h) }))
        .collect();
        Caught { before }
    }

    impl Drop for Caught {
        fn drop(&mut self) {
            for &(sig, h) in &self.before {
                // SAFETY: puts back the disposition `catch` found.
                unsafe { signal(sig, h) };
            }
        }
    }

    /// The signal caught, if any.
    pub fn caught() -> Option<i32> {
        match CAUGHT.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }

    /// Sends `sig` to the process group that the rank `pid` leads. The caller makes sure the
    /// rank is not yet reaped ([`super::super::procs`]).
    pub fn signal_group(pid: u32, sig: i32) {
        if let Ok(pid) = i32::try_from(pid) {
            // SAFETY: signals a group the launcher made (a negative pid); no memory involved.
            unsafe { kill(-pid, sig) };
        }
    }

    /// Whether the child `pid` has ended, looked at without reaping it (`waitid` with
    /// `WNOWAIT`); `None` where that cannot be told.
    pub fn has_exited(pid: u32) -> Option<bool> {
        #[cfg(target_os = "linux")]
        {
            const P_PID: u32 = 1;
            const WNOHANG: i32 = 1;
            const WEXITED: i32 = 4;
            const WNOWAIT: i32 = 0x0100_0000;
            // A `siginfo_t` (128 bytes), zeroed: with WNOHANG and nothing to report, Linux leaves
            // `si_signo` (its first field) zero; a child that ended sets it to SIGCHLD.
            let mut info = [0i32; 32];
            // SAFETY: `info` is a writable buffer of `siginfo_t`'s size.
            let r = unsafe { waitid(P_PID, pid, &mut info, WEXITED | WNOHANG | WNOWAIT) };
            if r == 0 { Some(info[0] != 0) } else { None }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = pid;
            None
        }
    }
}

#[cfg(not(unix))]
pub use other::*;

#[cfg(not(unix))]
mod other {
    pub struct Caught;
    pub fn catch() -> Caught {
        Caught
    }
    pub fn caught() -> Option<i32> {
        None
    }
    pub fn signal_group(_: u32, _: i32) {}
    pub fn has_exited(_: u32) -> Option<bool> {
        None
    }
}
