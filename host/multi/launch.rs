//! A local launcher (`gridsync launch -n N -- COMMAND…`): starts `N` ranks of a job on this
//! node, as `torchrun --standalone` does, with the torchrun variables (`RANK`, `WORLD_SIZE`,
//! `LOCAL_RANK`, `LOCAL_WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT`) and a job name
//! (`GRIDSYNC_JOB`) in each rank's environment; forwards each rank's output line by line with a
//! rank prefix; and fails as a whole: when one rank fails, the others are stopped and the
//! launch fails naming it.

use crate::runtime::error::{Error, Result};
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The most ranks one launch starts.
pub const MAX_LOCAL_RANKS: u32 = 1024;

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
}

/// How the ranks ended: each rank's exit status, in rank order.
#[derive(Debug)]
pub struct LaunchOutcome {
    /// Exit statuses by rank.
    pub statuses: Vec<ExitStatus>,
}

/// Starts `program args…` as `opts.ranks` ranks and waits for them. `program` `gridsync` means
/// this executable.
///
/// # Errors
/// [`Error::InvalidInput`] for no ranks or too many, or no program; [`Error::Job`] when a rank
/// cannot be started, exits unsuccessfully (the others are then stopped), or the job runs past
/// `opts.timeout`.
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
    let job = format!("launch-{}-{port}", std::process::id());
    let _caught = signals::catch();
    let mut children: Vec<Child> = Vec::new();
    // Output threads started, each saying on `done_tx` when its pipe closed.
    let mut pumps = 0;
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    for rank in 0..opts.ranks {
        let mut spawned = Command::new(&exe);
        spawned
            .args(args)
            .env("RANK", rank.to_string())
            .env("WORLD_SIZE", opts.ranks.to_string())
            .env("LOCAL_RANK", rank.to_string())
            .env("LOCAL_WORLD_SIZE", opts.ranks.to_string())
            .env("MASTER_ADDR", "127.0.0.1")
            .env("MASTER_PORT", port.to_string())
            .env("GRIDSYNC_JOB", &job)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Each rank in a process group of its own, so that stopping it stops what it started
        // (a `sh -c` wrapper's children hold its output open); Ctrl-C reaches the launcher,
        // which stops every rank.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut spawned, 0);
        signals::die_with_parent(&mut spawned);
        let spawned = spawned.spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                stop(&mut children);
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
            spawn_pump(out, tag.clone(), std::io::stdout, &done_tx);
            pumps += 1;
        }
        if let Some(err) = child.stderr.take() {
            spawn_pump(err, tag, std::io::stderr, &done_tx);
            pumps += 1;
        }
        children.push(child);
    }
    let waited = wait_all(&mut children, opts.timeout);
    // Every rank and its process group have ended, so their pipes close and the pumps finish;
    // a process that left the group could still hold one open: its last lines get a moment,
    // then it is left behind rather than waited for.
    let until = Instant::now() + Duration::from_secs(2);
    for _ in 0..pumps {
        let left = until.saturating_duration_since(Instant::now());
        if done_rx.recv_timeout(left).is_err() {
            break;
        }
    }
    waited.map(|statuses| LaunchOutcome { statuses })
}

/// A port on 127.0.0.1 that was free a moment ago.
fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| Error::Job(format!("no free port on 127.0.0.1: {e}")))?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|e| Error::Job(format!("no free port on 127.0.0.1: {e}")))
}

/// Starts a thread copying `from` to `to()` ([`pump`]) that says on `done` when `from` closed.
fn spawn_pump<W: Write + 'static>(
    from: impl Read + Send + 'static,
    tag: String,
    to: fn() -> W,
    done: &std::sync::mpsc::Sender<()>,
) {
    let done = done.clone();
    std::thread::spawn(move || {
        pump(from, &tag, &mut to());
        let _ = done.send(());
    });
}

/// Copies `from` to `to` line by line, each line whole and after `tag`.
fn pump(from: impl Read, tag: &str, to: &mut impl Write) {
    let mut lines = BufReader::new(from);
    let mut line = Vec::new();
    loop {
        line.clear();
        match lines.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if line.last() != Some(&b'\n') {
                    line.push(b'\n');
                }
                let mut whole = tag.as_bytes().to_vec();
                whole.extend_from_slice(&line);
                // One write per line: lines of different ranks do not interleave.
                if to.write_all(&whole).and_then(|()| to.flush()).is_err() {
                    return;
                }
            }
        }
    }
}

/// Kills every rank still running and what every rank started (its process group), and waits
/// for them.
fn stop(children: &mut [Child]) {
    for c in children.iter_mut() {
        signals::kill_group(c);
        if matches!(c.try_wait(), Ok(None)) {
            let _ = c.kill();
        }
        let _ = c.wait();
    }
}

/// Ctrl-C, `kill` and a closed terminal stop the ranks rather than the launcher alone; a rank
/// dies with the launcher even when the launcher is killed outright; killing a rank kills its
/// process group.
#[cfg(unix)]
mod signals {
    use std::process::{Child, Command};
    use std::sync::atomic::{AtomicI32, Ordering};

    /// The signal that asked the launcher to stop, or 0.
    static CAUGHT: AtomicI32 = AtomicI32::new(0);

    unsafe extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
        fn kill(pid: i32, sig: i32) -> i32;
    }
    const SIGHUP: i32 = 1;
    const SIGINT: i32 = 2;
    const SIGKILL: i32 = 9;
    const SIGPIPE: i32 = 13;
    const SIGTERM: i32 = 15;
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
    /// own, running — and SIGPIPE (a reader of the output gone) is ignored: the output's
    /// writes fail instead.
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

    /// On Linux, the rank is killed when the launcher dies, however it dies.
    pub fn die_with_parent(cmd: &mut Command) {
        #[cfg(target_os = "linux")]
        {
            unsafe extern "C" {
                fn prctl(option: i32, arg2: u64, arg3: u64, arg4: u64, arg5: u64) -> i32;
            }
            const PR_SET_PDEATHSIG: i32 = 1;
            // SAFETY: `prctl` is async-signal-safe, as code between fork and exec must be.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(cmd, || {
                    prctl(PR_SET_PDEATHSIG, SIGKILL as u64, 0, 0, 0);
                    Ok(())
                });
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = cmd;
    }

    /// SIGKILL to the process group `c` leads (whether or not `c` itself still runs).
    pub fn kill_group(c: &Child) {
        if let Ok(pid) = i32::try_from(c.id()) {
            // SAFETY: signals the group the launcher made for this rank (a negative pid).
            unsafe { kill(-pid, SIGKILL) };
        }
    }

    /// The signal caught, if any.
    pub fn caught() -> Option<i32> {
        match CAUGHT.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }
}

#[cfg(not(unix))]
mod signals {
    pub struct Caught;
    pub fn catch() -> Caught {
        Caught
    }
    pub fn die_with_parent(_: &mut std::process::Command) {}
    pub fn kill_group(_: &std::process::Child) {}
    pub fn caught() -> Option<i32> {
        None
    }
}

/// Waits for every rank; on the first that fails (or on the bound), stops the others.
fn wait_all(children: &mut [Child], timeout: Option<Duration>) -> Result<Vec<ExitStatus>> {
    let start = Instant::now();
    let mut statuses: Vec<Option<ExitStatus>> = vec![None; children.len()];
    loop {
        // Every rank that ended since the last look: a failure that makes other ranks fail is
        // often seen in the same look as theirs, so all of them are named.
        let mut failed = Vec::new();
        for (rank, c) in children.iter_mut().enumerate() {
            if statuses[rank].is_some() {
                continue;
            }
            match c.try_wait() {
                Ok(Some(s)) => {
                    statuses[rank] = Some(s);
                    // What the rank started ends with it (and its output pipes close).
                    signals::kill_group(c);
                    if !s.success() {
                        failed.push(format!("rank {rank} {}", describe(s)));
                    }
                }
                Ok(None) => {}
                Err(e) => failed.push(format!("rank {rank} could not be waited for ({e})")),
            }
        }
        if !failed.is_empty() {
            stop(children);
            return Err(Error::Job(format!(
                "{} (of {} ranks); the other ranks were stopped",
                failed.join(", "),
                children.len()
            )));
        }
        if statuses.iter().all(Option::is_some) {
            return Ok(statuses.into_iter().flatten().collect());
        }
        if let Some(sig) = signals::caught() {
            stop(children);
            return Err(Error::Job(format!(
                "the launcher got signal {sig}; every rank was stopped"
            )));
        }
        if let Some(t) = timeout
            && start.elapsed() > t
        {
            let running: Vec<String> = statuses
                .iter()
                .enumerate()
                .filter(|(_, s)| s.is_none())
                .take(8)
                .map(|(r, _)| r.to_string())
                .collect();
            stop(children);
            return Err(Error::Job(format!(
                "still running after {:.1} s (rank(s) {}); every rank was stopped",
                t.as_secs_f64(),
                running.join(", ")
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
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
