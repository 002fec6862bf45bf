//! Every rank's process group dies with the launcher, however the launcher dies (Linux).
//!
//! `PR_SET_PDEATHSIG` asks the kernel to signal a process when its parent dies, but only the
//! launcher's own child has the launcher as its parent: what a rank starts (`sh -c 'a & b'`)
//! would outlive a launcher killed with `SIGKILL`. So the launcher's child does not become the
//! rank. Between `fork` and `exec` (a `pre_exec` step, run after the child has entered the
//! rank's new process group) it forks once more:
//!
//! ```text
//! launcher ── supervisor (the launcher's child, leads the group, PDEATHSIG = SIGTERM)
//!               └── rank (execs the command) ── what the rank starts …  (one group)
//! ```
//!
//! - **The launcher dies** (any way): the kernel sends the supervisor `SIGTERM`; its handler
//!   sees that its parent is no longer the launcher and sends `SIGKILL` to its own group —
//!   the rank, everything the rank started, and itself.
//! - **The launcher stops the job**: it signals the group, so the supervisor gets the same
//!   `SIGTERM`, sees that the launcher is still its parent, and does nothing; the rank decides.
//!   `SIGKILL` after the grace ends the whole group at once, the supervisor with it.
//! - **The rank ends**: the supervisor leaves the group (into the launcher's), sends the group
//!   `SIGKILL` (what the rank left running; the launcher does the same when it reaps the
//!   supervisor, but it could die in between), and exits as the rank did — its exit status, or
//!   the same signal — so the launcher reports the rank's own status. Should it fail to leave
//!   the group (the launcher's group gone), it does not kill the group, which would kill
//!   itself and report signal 9 for the rank: it leaves that to the launcher's reap, and
//!   kills the group, itself with it, only when the launcher is dead and reports nothing.
//!
//! **Signals until `exec`.** The fork is a copy of the launcher, with its handler for
//! `SIGHUP`, `SIGINT` and `SIGTERM` (`launch/signals.rs`), which `exec` would reset but `std`
//! does not. So the three are blocked across the second `fork`: the rank sets them to their
//! default action and takes back the launcher's mask, and the supervisor installs its own
//! dispositions, before either unblocks them. A signal sent to the group in between waits,
//! and then does what it would do to a started rank — it is not swallowed, which would leave a
//! stopped rank running until `SIGKILL`. (Before the block, the launcher's handler itself
//! sees that it runs in a copy and lets the signal take its default action.)
//!
//! The supervisor is a copy of the launcher that never runs Rust's runtime again: between
//! `fork` and `exit` it makes only async-signal-safe calls (`close`, `open`, `lseek`,
//! `getdents64`, `signal`, `sigprocmask`, `prctl`, `waitpid`, `kill`, `setpgid`), as code
//! forked from a process with threads must. It closes every file descriptor (`launch/fds.rs`),
//! so that it holds neither the rank's output pipes nor the channel on which `std` learns that
//! `exec` succeeded (which `spawn` reads until every copy closes). `PR_SET_PDEATHSIG` fires
//! when the *thread* that forked dies; that is the thread in [`launch`](super::launch), which
//! returns only once every supervisor has ended.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicI32, Ordering};

unsafe extern "C" {
    fn fork() -> i32;
    fn getpid() -> i32;
    fn getppid() -> i32;
    fn getpgrp() -> i32;
    fn setpgid(pid: i32, pgid: i32) -> i32;
    fn kill(pid: i32, sig: i32) -> i32;
    fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
    fn signal(signum: i32, handler: usize) -> usize;
    fn prctl(option: i32, arg2: u64, arg3: u64, arg4: u64, arg5: u64) -> i32;
    fn sigprocmask(how: i32, set: *const [u64; 16], old: *mut [u64; 16]) -> i32;
    fn setrlimit(resource: i32, limit: *const [u64; 2]) -> i32;
    fn __errno_location() -> *mut i32;
    fn _exit(status: i32) -> !;
}

const SIGHUP: i32 = 1;
const SIGINT: i32 = 2;
const SIGKILL: i32 = 9;
const SIGTERM: i32 = 15;
const SIG_DFL: usize = 0;
const SIG_IGN: usize = 1;
const SIG_BLOCK: i32 = 0;
const SIG_UNBLOCK: i32 = 1;
const SIG_SETMASK: i32 = 2;
/// `SIGHUP`, `SIGINT` and `SIGTERM` as a `sigset_t` (bit `N - 1` for signal `N`).
const STOP_SIGNALS: [u64; 16] = {
    let mut set = [0; 16];
    set[0] = 1 << (SIGHUP - 1) | 1 << (SIGINT - 1) | 1 << (SIGTERM - 1);
    set
};
const EINTR: i32 = 4;
const PR_SET_PDEATHSIG: i32 = 1;
const RLIMIT_CORE: i32 = 4;

/// The launcher's pid, in the supervisor (its handler compares its parent with it).
static LAUNCHER: AtomicI32 = AtomicI32::new(0);

/// Makes `cmd` start its program under a supervisor (module docs). `cmd` must make a new
/// process group (`process_group(0)`): the group is what the supervisor takes down.
pub fn supervise(cmd: &mut Command) {
    // SAFETY: reads the calling process's ids.
    let (launcher, launcher_group) = unsafe { (getpid(), getpgrp()) };
    supervise_from(cmd, launcher, launcher_group);
}

/// [`supervise`], for a launcher `launcher` in process group `launcher_group`.
fn supervise_from(cmd: &mut Command, launcher: i32, launcher_group: i32) {
    // SAFETY: the step makes only async-signal-safe calls (module docs).
    unsafe {
        cmd.pre_exec(move || split(launcher, launcher_group));
    }
}

/// In the launcher's child, before `exec`: forks the rank, which returns to `exec` with the
/// default action for the stop signals, and stays behind as its supervisor.
fn split(launcher: i32, launcher_group: i32) -> io::Result<()> {
    let mut mask = [0; 16];
    // SAFETY: this process has one thread (it is a fork); the child only resets its own
    // dispositions and mask, and returns to `exec`.
    unsafe {
        if sigprocmask(SIG_BLOCK, &STOP_SIGNALS, &mut mask) != 0 {
            return Err(io::Error::last_os_error());
        }
        match fork() {
            -1 => Err(io::Error::last_os_error()),
            0 => {
                // The launcher's handler would swallow a stop (module docs).
                for sig in [SIGHUP, SIGINT, SIGTERM] {
                    signal(sig, SIG_DFL);
                }
                // The launcher's mask, as `std` passes it on; a signal held meanwhile acts now.
                sigprocmask(SIG_SETMASK, &mask, std::ptr::null_mut());
                Ok(())
            }
            rank => run(rank, launcher, launcher_group),
        }
    }
}

/// The supervisor of `rank`; never returns. The stop signals are blocked when it starts.
fn run(rank: i32, launcher: i32, launcher_group: i32) -> ! {
    // SAFETY (the whole function): only async-signal-safe calls, on this process's own state.
    unsafe {
        LAUNCHER.store(launcher, Ordering::SeqCst);
        // The launcher signals the group; only its SIGTERM and SIGKILL mean anything here.
        signal(SIGHUP, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, on_sigterm as extern "C" fn(i32) as usize);
        // Unblocked whatever the launcher's mask: the kernel's SIGTERM must reach `on_sigterm`.
        sigprocmask(SIG_UNBLOCK, &STOP_SIGNALS, std::ptr::null_mut());
        super::fds::close_every_fd();
        prctl(PR_SET_PDEATHSIG, SIGTERM as u64, 0, 0, 0);
        if getppid() != launcher {
            // The launcher died before the line above.
            kill(0, SIGKILL);
        }
        let mut status = 0;
        loop {
            if waitpid(rank, &mut status, 0) == rank {
                break;
            }
            if *__errno_location() != EINTR {
                // Not ours to wait for: cannot happen, but the group still goes.
                status = 127 << 8;
                break;
            }
        }
        // The rank ended. Out of its group (so that the group can be killed without this
        // process), then the group, which ends what the rank left running.
        signal(SIGTERM, SIG_IGN);
        if setpgid(0, launcher_group) == 0 {
            kill(-getpid(), SIGKILL);
        } else if getppid() != launcher {
            // Stuck in the group, with no launcher to report to: the group, this process too.
            kill(0, SIGKILL);
        }
        // Else stuck in the group with the launcher alive: killing the group would kill this
        // process and report signal 9 for the rank; the launcher kills the group when it reaps
        // this process (`launch/procs.rs`).
        exit_as(status)
    }
}

/// `SIGTERM` in the supervisor: from the kernel when the launcher died (PDEATHSIG; the parent
/// is then another process), or from the launcher stopping the group (the rank got it too).
extern "C" fn on_sigterm(_: i32) {
    // SAFETY: `getppid` and `kill` are async-signal-safe.
    unsafe {
        if getppid() != LAUNCHER.load(Ordering::SeqCst) {
            kill(0, SIGKILL);
        }
    }
}

/// Ends this process as a `waitpid` `status` says the rank ended: the same exit status, or
/// killed by the same signal (without a core dump of this process).
///
/// # Safety
/// Only in the supervisor.
unsafe fn exit_as(status: i32) -> ! {
    let sig = status & 0x7f;
    // SAFETY: async-signal-safe calls on this process's own state.
    unsafe {
        if sig == 0 {
            _exit((status >> 8) & 0xff);
        }
        setrlimit(RLIMIT_CORE, &[0, 0]);
        signal(sig, SIG_DFL);
        sigprocmask(SIG_SETMASK, &[0; 16], std::ptr::null_mut());
        kill(getpid(), sig);
        _exit(128 + sig)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    /// The rank starts its program with the default action for `SIGHUP`, `SIGINT` and
    /// `SIGTERM`, unblocked, even while the launcher's handlers are installed: a stop signal
    /// before `exec` is not swallowed.
    #[test]
    fn a_rank_starts_with_the_default_action_for_the_stop_signals() {
        let _caught = super::super::signals::catch();
        let mut cmd = Command::new("true");
        cmd.process_group(0);
        supervise(&mut cmd);
        // SAFETY: runs in the rank, after the supervisor's step, before `exec`: `signal` and
        // `sigprocmask` only; errors without allocating.
        unsafe {
            cmd.pre_exec(|| {
                let mut mask = [0u64; 16];
                sigprocmask(SIG_BLOCK, &[0; 16], &mut mask);
                for sig in [SIGHUP, SIGINT, SIGTERM] {
                    if signal(sig, SIG_DFL) != SIG_DFL {
                        return Err(io::Error::from_raw_os_error(1000 + sig));
                    }
                    if mask[0] & 1 << (sig - 1) != 0 {
                        return Err(io::Error::from_raw_os_error(2000 + sig));
                    }
                }
                Ok(())
            });
        }
        let status = cmd.status().map_err(|e| match e.raw_os_error() {
            Some(c @ 1000..2000) => format!("signal {} had a handler in the rank", c - 1000),
            Some(c @ 2000..3000) => format!("signal {} was blocked in the rank", c - 2000),
            _ => e.to_string(),
        });
        assert!(status.as_ref().is_ok_and(|s| s.success()), "{status:?}");
    }

    /// A supervisor that cannot leave the rank's group (here: the launcher's group is none
    /// that exists) exits as the rank did, rather than killing the group and itself with it.
    #[test]
    fn a_supervisor_stuck_in_the_group_reports_the_ranks_status() {
        // Above any pid (`pid_max` is at most 2²²): no such group, so `setpgid` fails.
        const NO_GROUP: i32 = i32::MAX;
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "exit 3"]).process_group(0);
        // SAFETY: reads this process's id.
        supervise_from(&mut cmd, unsafe { getpid() }, NO_GROUP);
        let status = cmd.status().unwrap();
        assert_eq!(
            (status.code(), status.signal()),
            (Some(3), None),
            "{status:?}"
        );
    }
}
