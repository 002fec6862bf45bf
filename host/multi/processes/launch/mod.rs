//! A local launcher (`gridsync launch -n N -- COMMAND…`): starts `N` ranks of a job on this
//! node, as `torchrun --standalone` does, with the torchrun variables (`RANK`, `WORLD_SIZE`,
//! `LOCAL_RANK`, `LOCAL_WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT`), a job name (`GRIDSYNC_JOB`)
//! and the job's secret ([`TOKEN_VAR`]) in each rank's environment; forwards each rank's output
//! line by line with a rank prefix; and fails as a whole: when one rank fails, the others are
//! stopped and the launch fails naming it.
//!
//! **The secret.** The launcher's own `GRIDSYNC_TOKEN` is passed on when it has one (so that a
//! job started by hand or by another launcher keeps its secret; one the rendezvous would refuse
//! is refused here, before any rank starts); when it has none, or an empty one, the launch
//! makes one ([`Token::random`]: 32 bytes from the operating system, in hex). Every rank of one
//! launch gets the same value, two launches get different ones, and the launcher never prints
//! it.
//!
//! **Output.** Each rank's stdout and stderr are read by a thread of their own and written
//! whole, one line per write, after `[rank] `: lines of different ranks never mix. A line
//! longer than [`MAX_LINE_BYTES`] is passed on in pieces of at most that many bytes, each a
//! line of its own with the prefix (`launch/output.rs`): nothing is lost, and the launcher holds
//! at most that much of a rank's line however long it is.
//!
//! **Stopping.** Each rank runs in a process group of its own (what a `sh -c` wrapper started
//! goes with it). Stopping the job sends `SIGTERM` to the group of every rank still running,
//! waits up to [`LaunchOptions::grace`] for them, sends `SIGKILL` to those left, and waits
//! [`AFTER_KILL`] more; a rank that has still not ended (stuck in the kernel) is named in the
//! message and left behind, never waited for without a bound. A rank is signalled only while it
//! is alive: its group gets `SIGKILL` once, at the moment it is reaped, and never again
//! (`launch/procs.rs`).
//!
//! **Dying with the launcher.** Linux's `PR_SET_PDEATHSIG` reaches only the launcher's direct
//! child, not what that child starts, so each rank is started through a small supervisor
//! (`launch/supervise.rs`): the launcher's child forks once more before `exec`, the new process
//! becomes the rank, and the child stays behind in the rank's group with `PDEATHSIG = SIGTERM`;
//! when the launcher dies, however it dies (`SIGKILL` included), the kernel signals the
//! supervisor, which kills its whole group (a `SIGTERM` while its parent is still the launcher
//! is the launcher stopping the job, which it leaves to the rank). The supervisor waits for the
//! rank and exits as the rank did, so the launcher sees the rank's own status. Elsewhere than
//! Linux ranks are started directly and outlive a launcher killed outright.
//!
//! **How it ends** ([`LaunchOutcome::exit_code`], `gridsync launch`'s exit status):
//!
//! | code | meaning |
//! |---|---|
//! | 0 | every rank exited with status 0 |
//! | [`EXIT_RANK_FAILED`] (1) | a rank failed (any non-zero status, or killed); the others were stopped |
//! | [`EXIT_TIMED_OUT`] (124) | the job ran past `--timeout`; every rank was stopped |
//! | [`EXIT_LAUNCHER`] (125) | the launcher could not run the job: bad options, a rank that cannot be started, no port |
//! | 128 + N | the launcher got signal N (130 for Ctrl-C, 143 for `SIGTERM`, 129 for `SIGHUP`); every rank was stopped |
//!
//! A failed rank's own status is in the message, not passed through as the launcher's: a rank
//! exiting 124 or 130 must not read as a timeout or a Ctrl-C (the codes of `timeout(1)` and the
//! shell, which a script may test).

use crate::multi::processes::Token;
use crate::runtime::error::{Error, Result};
use std::ffi::OsString;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

#[cfg(target_os = "linux")]
mod fds;
mod output;
mod procs;
mod signals;
#[cfg(target_os = "linux")]
mod supervise;

pub use output::MAX_LINE_BYTES;
use procs::{Ended, Ranks, Stopped};

/// The most ranks one launch starts.
pub const MAX_LOCAL_RANKS: u32 = 1024;
/// The environment variable that holds the job's secret (`GRIDSYNC_TOKEN`), which every rank
/// proves at the rendezvous; defined beside the rendezvous that reads it.
pub use crate::multi::processes::TOKEN_VAR;
use crate::multi::processes::torchrun;
/// How long stopped ranks get between `SIGTERM` and `SIGKILL` by default (`--grace`): time for
/// a rank to flush its output and leave a communicator, short enough for Ctrl-C.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(5);
/// How long the launcher waits for a rank after `SIGKILL` before naming it and leaving it: a
/// killed process ends as soon as it leaves the kernel, so only one stuck there (a driver call)
/// takes longer.
pub const AFTER_KILL: Duration = Duration::from_secs(2);

/// Exit status of a launch in which a rank failed.
pub const EXIT_RANK_FAILED: i32 = 1;
/// Exit status of a launch that ran past its timeout (as `timeout(1)`'s).
pub const EXIT_TIMED_OUT: i32 = 124;
/// Exit status of a launch that could not run: bad options, a rank not started (as
/// `timeout(1)`'s own failures).
pub const EXIT_LAUNCHER: i32 = 125;
/// A launch stopped by signal `N` exits with `EXIT_SIGNALLED + N`, as a shell reports it.
pub const EXIT_SIGNALLED: i32 = 128;

/// How long between two looks at the ranks.
const POLL: Duration = Duration::from_millis(10);
/// How long the output of stopped ranks gets to drain: a process that left its rank's group
/// could hold a pipe open forever.
const DRAIN: Duration = Duration::from_secs(2);

/// How to launch.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    /// Ranks to start (1 to [`MAX_LOCAL_RANKS`]).
    pub ranks: u32,
    /// Rank 0's rendezvous port on 127.0.0.1; `None`: one free a moment before.
    pub port: Option<u16>,
    /// Prefix every line of a rank's output with `[rank] ` (off: lines pass as they are, still
    /// whole).
    pub prefix: bool,
    /// Stop every rank and fail after this long; `None`: no bound but the ranks' own.
    pub timeout: Option<Duration>,
    /// Between `SIGTERM` and `SIGKILL` when ranks are stopped ([`DEFAULT_GRACE`]; zero: `SIGKILL`
    /// right after `SIGTERM`; one too long to add to the clock, such as `Duration::MAX`: a day).
    pub grace: Duration,
}

/// How the job ended, and the launcher's message when it failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobEnd {
    /// Every rank exited with status 0.
    Succeeded,
    /// A rank failed; the others were stopped. Names the rank(s) and their statuses.
    RankFailed(String),
    /// The job ran past [`LaunchOptions::timeout`]; every rank was stopped.
    TimedOut(String),
    /// The launcher got this signal (`SIGINT`, `SIGTERM`, `SIGHUP`); every rank was stopped.
    Signalled {
        /// The signal's number.
        signal: i32,
        /// The message.
        why: String,
    },
}

/// How the ranks ended.
#[derive(Debug)]
pub struct LaunchOutcome {
    /// Each rank's exit status, in rank order; `None` for a rank not started, or one still
    /// running after `SIGKILL` and left behind (the message names it).
    pub statuses: Vec<Option<ExitStatus>>,
    /// How the job ended.
    pub end: JobEnd,
}

impl LaunchOutcome {
    /// The launcher's exit status (see the [module docs](self)).
    pub fn exit_code(&self) -> i32 {
        match &self.end {
            JobEnd::Succeeded => 0,
            JobEnd::RankFailed(_) => EXIT_RANK_FAILED,
            JobEnd::TimedOut(_) => EXIT_TIMED_OUT,
            JobEnd::Signalled { signal, .. } => EXIT_SIGNALLED + signal,
        }
    }

    /// `Ok` when every rank succeeded.
    ///
    /// # Errors
    /// [`Error::Job`] with the launcher's message otherwise.
    pub fn check(&self) -> Result<()> {
        match &self.end {
            JobEnd::Succeeded => Ok(()),
            JobEnd::RankFailed(why) | JobEnd::TimedOut(why) | JobEnd::Signalled { why, .. } => {
                Err(Error::Job(why.clone()))
            }
        }
    }
}

/// Starts `program args…` as `opts.ranks` ranks and waits for them. `program` `gridsync` means
/// this executable. A job that fails is not an error of this function: see
/// [`LaunchOutcome::end`] (or call [`LaunchOutcome::check`]).
///
/// **Signals.** While a launch runs, the process's dispositions of `SIGHUP`, `SIGINT` and
/// `SIGTERM` are the launcher's (the signal is noted and every rank stopped: the outcome is
/// [`JobEnd::Signalled`]) and `SIGPIPE` is ignored; a handler of the caller's own for them
/// does not run meanwhile. They are the process's, not the launch's: launches may run at
/// once on several threads, a signal stops every launch running when it comes (not one
/// started after it), and the dispositions found by the first are put back when the last
/// one returns.
///
/// # Errors
/// The launcher's own failures, before or while starting the ranks (those started are then
/// stopped): [`Error::InvalidInput`] for no ranks or too many, no program, or a secret in
/// [`TOKEN_VAR`] that the ranks would refuse; [`Error::Unsupported`] when no secret can be made;
/// [`Error::Job`] when no port is free or a rank cannot be started.
pub fn launch(
    opts: &LaunchOptions,
    program: &OsString,
    args: &[OsString],
) -> Result<LaunchOutcome> {
    if opts.ranks == 0 || opts.ranks > MAX_LOCAL_RANKS {
        return Err(Error::InvalidInput(format!(
            "-n {}: from 1 to {MAX_LOCAL_RANKS} ranks",
            opts.ranks
        )));
    }
    if program.is_empty() {
        return Err(Error::InvalidInput(
            "no command to launch: gridsync launch -n N -- COMMAND [ARGS…]".into(),
        ));
    }
    let exe = if program == "gridsync" {
        std::env::current_exe().map_err(|source| Error::Io {
            path: "/proc/self/exe".into(),
            source,
        })?
    } else {
        program.into()
    };
    let port = match opts.port {
        Some(p) => p,
        None => free_port()?,
    };
    let token = job_token()?;
    let job = format!("launch-{}-{port}", std::process::id());
    let caught = signals::catch();
    let mut ranks = Ranks::default();
    let mut pumps = output::Pumps::new();
    for rank in 0..opts.ranks {
        let mut spawned = Command::new(&exe);
        spawned
            .args(args)
            .env(torchrun::RANK, rank.to_string())
            .env(torchrun::WORLD_SIZE, opts.ranks.to_string())
            .env(torchrun::LOCAL_RANK, rank.to_string())
            .env(torchrun::LOCAL_WORLD_SIZE, opts.ranks.to_string())
            .env(torchrun::MASTER_ADDR, "127.0.0.1")
            .env(torchrun::MASTER_PORT, port.to_string())
            .env(crate::multi::processes::JOB_VAR, &job)
            .env(TOKEN_VAR, token.expose())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        procs::own_group(&mut spawned);
        let mut child = match spawned.spawn() {
            Ok(c) => c,
            Err(e) => {
                ranks.stop(opts.grace);
                return Err(Error::Job(format!(
                    "cannot start rank {rank} ({}): {e}",
                    exe.display()
                )));
            }
        };
        let tag = if opts.prefix {
            format!("[{rank}] ")
        } else {
            String::new()
        };
        if let Some(out) = child.stdout.take() {
            pumps.spawn(out, tag.clone(), std::io::stdout);
        }
        if let Some(err) = child.stderr.take() {
            pumps.spawn(err, tag, std::io::stderr);
        }
        ranks.push(child);
    }
    let end = wait_all(&mut ranks, opts, &caught);
    // Every rank and its process group have ended, so their pipes close and the pumps finish;
    // a process that left its group could still hold one open: the last lines get a moment,
    // then it is left behind rather than waited for.
    pumps.drain(DRAIN);
    Ok(LaunchOutcome {
        statuses: ranks.statuses(),
        end,
    })
}

/// The launcher's [`TOKEN_VAR`] if it has a non-empty one, else a new random one.
///
/// # Errors
/// [`Error::InvalidInput`] for a secret the ranks would refuse (not UTF-8, too short or too
/// long: [`Token::new`]); [`Error::Unsupported`] when the system gives no random bytes.
fn job_token() -> Result<Token> {
    match std::env::var(TOKEN_VAR) {
        Ok(t) if !t.is_empty() => Token::new(&t),
        Err(std::env::VarError::NotUnicode(_)) => Err(Error::InvalidInput(format!(
            "{TOKEN_VAR} is not UTF-8 text: a job's secret is text (e.g. `openssl rand -hex 32`)"
        ))),
        _ => Token::random(),
    }
}

/// A port on 127.0.0.1 that was free a moment ago.
fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| Error::Job(format!("no free port on 127.0.0.1: {e}")))?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|e| Error::Job(format!("no free port on 127.0.0.1: {e}")))
}

/// Waits for every rank; on the first that fails, on the bound or on a signal to the launcher,
/// stops the others.
fn wait_all(ranks: &mut Ranks, opts: &LaunchOptions, caught: &signals::Caught) -> JobEnd {
    let start = Instant::now();
    loop {
        // Every rank that ended since the last look: a failure that makes other ranks fail is
        // often seen in the same look as theirs, so all of them are named.
        let failed: Vec<String> = ranks
            .reap()
            .into_iter()
            .filter_map(|(rank, ended)| match ended {
                Ended::Status(s) if s.success() => None,
                Ended::Status(s) => Some(format!("rank {rank} {}", describe(s))),
                Ended::Lost(e) => Some(format!("rank {rank} could not be waited for ({e})")),
            })
            .collect();
        if !failed.is_empty() {
            let stopped = ranks.stop(opts.grace);
            return JobEnd::RankFailed(format!(
                "{} (of {} ranks); the other ranks were stopped{}",
                failed.join(", "),
                ranks.len(),
                stopped.note(opts.grace)
            ));
        }
        if ranks.live().next().is_none() {
            return JobEnd::Succeeded;
        }
        if let Some(signal) = caught.caught() {
            let stopped = ranks.stop(opts.grace);
            return JobEnd::Signalled {
                signal,
                why: format!(
                    "the launcher got signal {signal}; every rank was stopped{}",
                    stopped.note(opts.grace)
                ),
            };
        }
        if let Some(t) = opts.timeout
            && start.elapsed() > t
        {
            let running = list(ranks.live());
            let stopped = ranks.stop(opts.grace);
            return JobEnd::TimedOut(format!(
                "still running after {:.1} s (rank(s) {running}); every rank was stopped{}",
                t.as_secs_f64(),
                stopped.note(opts.grace)
            ));
        }
        std::thread::sleep(POLL);
    }
}

impl Stopped {
    /// What a message adds about the stop: the ranks that needed `SIGKILL`, those left behind.
    fn note(&self, grace: Duration) -> String {
        let mut note = String::new();
        if !self.killed.is_empty() {
            note += &format!(
                " (rank(s) {} only by SIGKILL, after a {:.1} s grace)",
                list(self.killed.iter().copied()),
                grace.as_secs_f64()
            );
        }
        if !self.left.is_empty() {
            note += &format!(
                "; rank(s) {} still ran {:.1} s after SIGKILL and were left behind",
                list(self.left.iter().copied()),
                AFTER_KILL.as_secs_f64()
            );
        }
        note
    }
}

/// `0, 3, 5`: at most 8 ranks, then `…`.
fn list(ranks: impl Iterator<Item = usize>) -> String {
    let mut all: Vec<String> = ranks.take(9).map(|r| r.to_string()).collect();
    if all.len() > 8 {
        all[8] = "…".into();
    }
    all.join(", ")
}

/// `exited with status 3` or `was killed by signal 9`.
fn describe(s: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = s.signal() {
            return format!("was killed by signal {sig}");
        }
    }
    match s.code() {
        Some(c) => format!("exited with status {c}"),
        None => "ended abnormally".into(),
    }
}
