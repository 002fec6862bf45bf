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
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicI32, AtomicU32, AtomicUsize, Ordering};

    /// How many stop signals the launcher has caught since it started; a launch compares it
    /// with the count when it began ([`Caught::caught`]).
    static CAUGHT_COUNT: AtomicUsize = AtomicUsize::new(0);
    /// The last stop signal caught (stored before [`CAUGHT_COUNT`] grows).
    static LAST_CAUGHT: AtomicI32 = AtomicI32::new(0);
    /// The launcher's pid: the handler also runs in a copy of the launcher between `fork` and
    /// `exec` (a rank not yet started), where it must not swallow the signal.
    static LAUNCHER: AtomicU32 = AtomicU32::new(0);
    /// The launches running, and the dispositions found by the first.
    static INSTALLED: Mutex<Installed> = Mutex::new(Installed {
        launches: 0,
        before: [0; HANDLED.len()],
    });

    unsafe extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
        fn kill(pid: i32, sig: i32) -> i32;
        fn getpid() -> i32;
        #[cfg(target_os = "linux")]
        fn waitid(idtype: u32, id: u32, infop: *mut [i32; 32], options: i32) -> i32;
    }
    const SIGHUP: i32 = 1;
    const SIGINT: i32 = 2;
    const SIGPIPE: i32 = 13;
    /// `SIG_DFL`.
    const DEFAULT: usize = 0;
    /// `SIG_IGN`.
    const IGNORE: usize = 1;
    /// The signals a launch handles, and how.
    const HANDLED: [(i32, Handler); 4] = [
        (SIGHUP, Handler::Note),
        (SIGINT, Handler::Note),
        (SIGTERM, Handler::Note),
        (SIGPIPE, Handler::Ignore),
    ];

    /// What a launch does with a signal: [`note`] it (the launch stops its ranks), or ignore it.
    #[derive(Clone, Copy)]
    enum Handler {
        Note,
        Ignore,
    }

    /// What [`INSTALLED`] holds.
    struct Installed {
        /// Launches whose [`Caught`] is alive.
        launches: usize,
        /// The dispositions of [`HANDLED`] before the first of them.
        before: [usize; HANDLED.len()],
    }

    extern "C" fn note(sig: i32) {
        // Only atomics, `getpid`, `signal` and `kill`: async-signal-safe.
        // SAFETY: reads this process's id.
        let me = unsafe { getpid() };
        if u32::try_from(me).ok() == Some(LAUNCHER.load(Ordering::SeqCst)) {
            LAST_CAUGHT.store(sig, Ordering::SeqCst);
            CAUGHT_COUNT.fetch_add(1, Ordering::SeqCst);
        } else {
            // A copy of the launcher that has not yet run `exec` (or become a rank's supervisor,
            // which installs its own): the signal does what it would do to the rank, instead of
            // being noted in memory that no launch reads.
            // SAFETY: this process's own disposition; the signal is blocked while its handler
            // runs, so it is delivered, with the default action, once the handler returns.
            unsafe {
                signal(sig, DEFAULT);
                kill(me, sig);
            }
        }
    }

    /// One launch's hold on the launcher's handlers; the dispositions found by the first launch
    /// are put back when the last one drops its hold.
    pub struct Caught {
        /// [`CAUGHT_COUNT`] when the launch began.
        seen: usize,
    }

    /// From now until the guard drops, SIGHUP, SIGINT and SIGTERM are noted (see
    /// [`Caught::caught`]) rather than ending the launcher — which would leave the ranks, in
    /// process groups of their own, running until their supervisors noticed — and SIGPIPE (a
    /// reader of the output gone) is ignored: the output's writes fail instead.
    ///
    /// The dispositions are the process's, so they are shared: launches running at once hold
    /// them together, a signal is seen by every launch running when it comes, and the last
    /// launch to end puts back what the first found. `INSTALLED`'s lock orders the installs
    /// and the restores: a launch's handlers are in place when `catch` returns, and stay until
    /// its guard drops.
    pub fn catch() -> Caught {
        // Before the handlers are in place: every signal they note from now on is this
        // launch's.
        let seen = CAUGHT_COUNT.load(Ordering::SeqCst);
        // A launch that panicked while holding the lock left the count right (nothing in the
        // lock panics), so its state is used as is.
        let mut installed = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
        if installed.launches == 0 {
            LAUNCHER.store(std::process::id(), Ordering::SeqCst);
            let note = note as extern "C" fn(i32) as usize;
            for (k, (sig, handler)) in HANDLED.into_iter().enumerate() {
                let h = match handler {
                    Handler::Note => note,
                    Handler::Ignore => IGNORE,
                };
                // SAFETY: installs a handler that only notes the signal (see `note`), or ignores
                // the signal.
                installed.before[k] = unsafe { signal(sig, h) };
            }
        }
        installed.launches += 1;
        Caught { seen }
    }

    impl Caught {
        /// The stop signal caught since this launch began, if any (the last, if several).
        pub fn caught(&self) -> Option<i32> {
            // `note` stores the signal before it counts it.
            if CAUGHT_COUNT.load(Ordering::SeqCst) == self.seen {
                None
            } else {
                Some(LAST_CAUGHT.load(Ordering::SeqCst))
            }
        }
    }

    impl Drop for Caught {
        fn drop(&mut self) {
            let mut installed = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
            installed.launches = installed.launches.saturating_sub(1);
            if installed.launches == 0 {
                for (k, (sig, _)) in HANDLED.into_iter().enumerate() {
                    // SAFETY: puts back the disposition the first launch found.
                    unsafe { signal(sig, installed.before[k]) };
                }
            }
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    unsafe extern "C" {
        fn fork() -> i32;
        fn pause() -> i32;
        fn kill(pid: i32, sig: i32) -> i32;
        fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
    }
    const WNOHANG: i32 = 1;

    /// A copy of the launcher not yet at `exec` (a rank being started) that gets `SIGTERM`
    /// ends by it, as the rank would: the launcher's handler does not swallow it there.
    #[test]
    fn a_copy_of_the_launcher_ends_by_a_stop_signal() {
        let caught = catch();
        // SAFETY: the child only calls `pause`, async-signal-safe, until a signal ends it.
        let pid = unsafe { fork() };
        if pid == 0 {
            loop {
                // SAFETY: waits for a signal.
                unsafe { pause() };
            }
        }
        assert!(pid > 0, "fork failed");
        // SAFETY: signals the child just forked, not yet reaped.
        unsafe { kill(pid, SIGTERM) };
        let until = Instant::now() + Duration::from_secs(5);
        let mut status = 0;
        // SAFETY: waits for this test's own child.
        while unsafe { waitpid(pid, &mut status, WNOHANG) } == 0 {
            if Instant::now() > until {
                // SAFETY: ends and reaps this test's own child.
                unsafe {
                    kill(pid, SIGKILL);
                    waitpid(pid, &mut status, 0);
                }
                panic!("the copy still ran 5 s after SIGTERM: its handler swallowed it");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(status & 0x7f, SIGTERM, "wait status {status:#x}");
        assert_eq!(
            caught.caught(),
            None,
            "the copy's signal was noted as the launcher's"
        );
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
    impl Caught {
        pub fn caught(&self) -> Option<i32> {
            None
        }
    }
    pub fn signal_group(_: u32, _: i32) {}
    pub fn has_exited(_: u32) -> Option<bool> {
        None
    }
}
