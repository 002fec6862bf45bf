//! `gridsync launch` with real processes: stopping sends SIGTERM, then SIGKILL after the grace,
//! within a bound; a rank that ended is not stopped again; the exit status tells a rank's
//! failure, a timeout, a signal to the launcher and the launcher's own failure apart; long
//! lines pass in pieces of 64 KiB; a launcher killed with SIGKILL takes every process of every
//! rank with it; every rank gets the job's secret, a new one for each launch; launches at once in
//! one process share the launcher's signal handlers. (That a rank reaped is never signalled
//! again is tested where it is decided, in the launcher's `procs`.)
//!
//! Every launch runs under a watchdog, or a timeout of its own where the library runs it, and
//! ends by itself; the file takes a few seconds.

mod common;

use common::{bin, within, within_meanwhile};
use gridsync::multi::processes::launch::{
    EXIT_LAUNCHER, EXIT_RANK_FAILED, EXIT_SIGNALLED, EXIT_TIMED_OUT, JobEnd, LaunchOptions,
    MAX_LINE_BYTES, TOKEN_VAR, launch,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

unsafe extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}
const SIGINT: i32 = 2;
const SIGTERM: i32 = 15;

/// `gridsync ARGS`, without a secret of its own, as a command.
fn gridsync_cmd(args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args).env_remove(TOKEN_VAR);
    c
}

/// `gridsync ARGS`'s output, under [`within`].
fn gridsync(args: &[&str], limit: Duration) -> Output {
    within(gridsync_cmd(args), limit)
}

/// `gridsync launch OPTIONS -- sh -c SCRIPT`, without a secret of its own, as a command.
fn launch_sh_cmd(options: &[&str], script: &str) -> Command {
    gridsync_cmd(&[&["launch"], options, &["--", "sh", "-c", script]].concat())
}

/// `gridsync launch OPTIONS -- sh -c SCRIPT`'s output, under [`within`] 20 s.
fn launch_sh(options: &[&str], script: &str) -> Output {
    within(launch_sh_cmd(options, script), Duration::from_secs(20))
}

/// A directory of this test's own, empty.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gridsync-launch-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Waits (at most 10 s) until every one of `files` in `dir` exists.
fn wait_for_files(dir: &Path, files: &[&str]) {
    let until = Instant::now() + Duration::from_secs(10);
    while !files.iter().all(|f| dir.join(f).exists()) {
        assert!(Instant::now() < until, "the ranks never wrote {files:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn stopping_sends_sigterm_then_sigkill_after_the_grace() {
    // Ranks that end on SIGTERM (saying so) end the launch long before the grace is over.
    let start = Instant::now();
    let out = launch_sh(
        &["-n", "2", "--timeout", "1", "--grace", "10"],
        "trap 'echo got TERM; exit 0' TERM; sleep 1000 & wait",
    );
    let took = start.elapsed();
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(EXIT_TIMED_OUT), "{se}");
    assert!(
        so.contains("[0] got TERM") && so.contains("[1] got TERM"),
        "{so}"
    );
    assert!(
        se.contains("still running after 1.0 s (rank(s) 0, 1)"),
        "{se}"
    );
    assert!(!se.contains("SIGKILL"), "{se}");
    assert!(took < Duration::from_secs(5), "{took:?}");

    // Ranks that ignore SIGTERM (and so does their `sleep`) get SIGKILL when the grace is over:
    // the launch ends after timeout + grace, not long after.
    let start = Instant::now();
    let out = launch_sh(
        &["-n", "2", "--timeout", "1", "--grace", "1"],
        "trap '' TERM; sleep 1000",
    );
    let took = start.elapsed();
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(EXIT_TIMED_OUT), "{se}");
    assert!(
        se.contains("(rank(s) 0, 1 only by SIGKILL, after a 1.0 s grace)"),
        "{se}"
    );
    assert!(took >= Duration::from_secs(2), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn a_rank_that_ended_is_not_among_those_stopped() {
    let out = launch_sh(
        &["-n", "3", "--timeout", "1"],
        "if [ $RANK = 1 ]; then exit 0; fi; exec sleep 1000",
    );
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(EXIT_TIMED_OUT), "{se}");
    assert!(
        se.contains("(rank(s) 0, 2); every rank was stopped\n"),
        "{se}"
    );
}

#[test]
fn the_exit_status_tells_how_the_job_ended() {
    let code = |args: &[&str]| gridsync(args, Duration::from_secs(20)).status.code();
    assert_eq!(code(&["launch", "-n", "3", "--", "true"]), Some(0));
    // A rank's failure: 1 whatever its own status, which the message names.
    for status in ["3", "124", "130"] {
        let script = format!("[ $RANK = 1 ] && exit {status}; exec sleep 1000");
        let out = launch_sh(&["-n", "2", "--grace", "1"], &script);
        let se = text(&out.stderr);
        assert_eq!(out.status.code(), Some(EXIT_RANK_FAILED), "{se}");
        assert!(
            se.contains(&format!("rank 1 exited with status {status} (of 2 ranks)")),
            "{se}"
        );
    }
    let killed = launch_sh(&["-n", "1"], "kill -9 $$");
    assert_eq!(killed.status.code(), Some(EXIT_RANK_FAILED));
    assert!(text(&killed.stderr).contains("rank 0 was killed by signal 9"));
    // The bound.
    assert_eq!(
        code(&[
            "launch",
            "-n",
            "2",
            "--timeout",
            "0.2",
            "--",
            "sleep",
            "1000"
        ]),
        Some(EXIT_TIMED_OUT)
    );
    // The launcher's own failures: bad options, a command that cannot start.
    for args in [
        &["launch", "-n", "0", "--", "true"][..],
        &["launch", "-n", "2", "--grace=-1", "--", "true"][..],
        &["launch", "-n", "2", "--timeout", "0", "--", "true"][..],
        &["launch", "-n", "2", "--", "/nonexistent/gridsync-rank"][..],
    ] {
        assert_eq!(code(args), Some(EXIT_LAUNCHER), "{args:?}");
    }
    // A command line that does not parse: clap's status.
    assert_eq!(code(&["launch", "-n", "2"]), Some(2));
    // A signal to the launcher: 128 + its number, every rank stopped.
    for sig in [SIGTERM, SIGINT] {
        let dir = scratch(&format!("signal-{sig}"));
        let script = format!("touch {}/$RANK; exec sleep 1000", dir.display());
        let start = Instant::now();
        let out = within_meanwhile(
            launch_sh_cmd(&["-n", "2"], &script),
            Duration::from_secs(20),
            |pid| {
                wait_for_files(&dir, &["0", "1"]);
                // SAFETY: signals the launcher this test started, which has not been reaped.
                unsafe { kill(pid as i32, sig) };
            },
        );
        let se = text(&out.stderr);
        assert_eq!(out.status.code(), Some(EXIT_SIGNALLED + sig), "{se}");
        assert!(
            se.contains(&format!("the launcher got signal {sig}")),
            "{se}"
        );
        assert!(start.elapsed() < Duration::from_secs(5));
        std::fs::remove_dir_all(&dir).unwrap();
    }
    // `--help` tells them.
    let help = text(&gridsync(&["launch", "--help"], Duration::from_secs(20)).stdout);
    for code in ["124", "125", "128+N"] {
        assert!(help.contains(code), "{help}");
    }
}

#[test]
fn a_long_line_passes_in_pieces_of_64_kib() {
    let len: usize = 10_000_000;
    let script = format!("head -c {len} /dev/zero | tr '\\0' x; echo; echo end");
    let out = within(
        launch_sh_cmd(&["-n", "1"], &script),
        Duration::from_secs(30),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let so = text(&out.stdout);
    let lines: Vec<&str> = so.lines().collect();
    assert_eq!(lines.len(), len.div_ceil(MAX_LINE_BYTES) + 1);
    let mut xs = 0;
    for l in &lines[..lines.len() - 1] {
        let piece = l.strip_prefix("[0] ").expect("every piece has the prefix");
        assert!(piece.len() <= MAX_LINE_BYTES && piece.bytes().all(|b| b == b'x'));
        xs += piece.len();
    }
    assert_eq!(xs, len);
    assert_eq!(lines.last(), Some(&"[0] end"));
}

/// Whether `pid` is a live process named `comm` (a zombie is not live: where nothing reaps
/// orphans, killed processes stay zombies).
fn alive(pid: &str, comm: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `pid (comm) state ppid …`
        Ok(stat) => {
            let (name, rest) = stat
                .split_once(" (")
                .and_then(|(_, r)| r.rsplit_once(") "))
                .unwrap();
            name == comm && !rest.starts_with('Z')
        }
        Err(_) => false,
    }
}

/// `pid`'s parent and its name.
fn parent(pid: &str) -> (String, String) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let ppid = stat.rsplit_once(") ").unwrap().1.split(' ').nth(1).unwrap();
    let comm = std::fs::read_to_string(format!("/proc/{ppid}/comm")).unwrap();
    (ppid.to_string(), comm.trim().to_string())
}

/// A child killed when dropped: a test that fails midway leaves no launcher running.
struct KilledOnDrop(std::process::Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
#[cfg(target_os = "linux")]
fn a_launcher_killed_outright_takes_every_rank_with_it() {
    let dir = scratch("sigkill");
    // Each rank: a `sleep` in the background and one in the foreground, their pids written.
    let script = format!(
        "sleep 1000 & echo $$ $! > {d}/$RANK.tmp && mv {d}/$RANK.tmp {d}/$RANK; exec sleep 1000",
        d = dir.display()
    );
    let mut launcher = KilledOnDrop(
        launch_sh_cmd(&["-n", "2"], &script)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for_files(&dir, &["0", "1"]);
    // Every process of every rank, with its name: the two `sleep`s, and whatever stands between
    // the launcher and the rank.
    let mut procs: Vec<(String, String)> = Vec::new();
    for rank in ["0", "1"] {
        let pids = std::fs::read_to_string(dir.join(rank)).unwrap();
        let pids: Vec<&str> = pids.split_whitespace().collect();
        assert_eq!(pids.len(), 2, "{pids:?}");
        let (ppid, pcomm) = parent(pids[0]);
        if ppid != launcher.0.id().to_string() {
            procs.push((ppid, pcomm));
        }
        for pid in pids {
            procs.push((pid.to_string(), "sleep".into()));
        }
    }
    // Each to begin with (the shell that wrote the pids is `sleep` once it has run `exec`).
    let until = Instant::now() + Duration::from_secs(10);
    for (pid, comm) in &procs {
        while !alive(pid, comm) {
            assert!(Instant::now() < until, "{pid} ({comm}) never ran");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    launcher.0.kill().unwrap();
    launcher.0.wait().unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let left: Vec<_> = procs.iter().filter(|(p, c)| alive(p, c)).collect();
        if left.is_empty() {
            break;
        }
        if Instant::now() > until {
            for (pid, _) in &left {
                // SAFETY: ends what this test started (checked by name just above).
                unsafe { kill(pid.parse().unwrap(), 9) };
            }
            panic!("still running 5 s after the launcher was killed: {left:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_rank_gets_the_jobs_secret_and_never_sees_it_printed() {
    assert!(
        launch_sh(&["-n", "2"], "test -n \"$GRIDSYNC_TOKEN\"")
            .status
            .success()
    );
    // One secret per launch, the same on every rank: 32 random bytes in hex.
    let tokens = || {
        let out = launch_sh(&["-n", "2", "--no-prefix"], "echo $GRIDSYNC_TOKEN");
        assert!(out.status.success());
        let so = text(&out.stdout);
        let lines: Vec<String> = so.lines().map(String::from).collect();
        assert_eq!(lines.len(), 2, "{so}");
        assert_eq!(lines[0], lines[1]);
        assert_eq!(lines[0].len(), 64);
        assert!(lines[0].bytes().all(|b| b.is_ascii_hexdigit()));
        lines[0].clone()
    };
    assert_ne!(tokens(), tokens());
    // The launcher's own is passed on, and not printed when the job fails.
    let secret = "a-secret-of-this-test-0123456789";
    let mut c = launch_sh_cmd(
        &["-n", "2"],
        "[ \"$GRIDSYNC_TOKEN\" = a-secret-of-this-test-0123456789 ] && exit 3",
    );
    c.env(TOKEN_VAR, secret);
    let out = within(c, Duration::from_secs(20));
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(EXIT_RANK_FAILED), "{se}");
    assert!(se.contains("exited with status 3"), "{se}");
    assert!(!so.contains(secret) && !se.contains(secret));
    // One the rendezvous would refuse is refused before any rank starts.
    let mut c = gridsync_cmd(&["launch", "-n", "2", "--", "true"]);
    c.env(TOKEN_VAR, "short");
    let out = within(c, Duration::from_secs(20));
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(EXIT_LAUNCHER), "{se}");
    assert!(se.contains(TOKEN_VAR) && !se.contains("short"), "{se}");
}

/// Whether this process catches signal `sig` (its bit in `SigCgt`, /proc/self/status).
#[cfg(target_os = "linux")]
fn catches(sig: i32) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let mask = status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .unwrap();
    u64::from_str_radix(mask.trim(), 16).unwrap() & 1 << (sig - 1) != 0
}

/// Two launches of the library at once, in this process: the first to end does not put back
/// the dispositions it found while the other runs, so a SIGTERM to the process still stops
/// that one; the last to end puts them back.
#[test]
#[cfg(target_os = "linux")]
fn launches_at_once_share_the_signal_handlers() {
    let before = catches(SIGTERM);
    assert!(
        !before,
        "the test harness catches SIGTERM: this test cannot tell"
    );
    let dir = scratch("at-once");
    let started = |program: &str, args: &[&str]| {
        let opts = LaunchOptions {
            ranks: 1,
            port: None,
            prefix: true,
            timeout: Some(Duration::from_secs(20)),
            grace: Duration::from_secs(1),
        };
        let program = program.into();
        let args: Vec<_> = args.iter().map(Into::into).collect();
        std::thread::spawn(move || launch(&opts, &program, &args).unwrap())
    };
    let d = dir.display();
    // The first, until told to end; the second, until a signal.
    let first = started(
        "sh",
        &[
            "-c",
            &format!("touch {d}/first; while [ ! -e {d}/end ]; do sleep 0.02; done"),
        ],
    );
    wait_for_files(&dir, &["first"]);
    let second = started("sh", &["-c", &format!("touch {d}/second; exec sleep 1000")]);
    wait_for_files(&dir, &["second"]);
    std::fs::write(dir.join("end"), "").unwrap();
    assert_eq!(first.join().unwrap().end, JobEnd::Succeeded);
    assert!(!second.is_finished());
    assert!(
        catches(SIGTERM),
        "the first launch to end put back the dispositions while the second still ran"
    );
    // SAFETY: signals this process, which catches SIGTERM (just checked) while `second` runs.
    unsafe { kill(std::process::id() as i32, SIGTERM) };
    let end = second.join().unwrap().end;
    assert!(
        matches!(
            end,
            JobEnd::Signalled {
                signal: SIGTERM,
                ..
            }
        ),
        "{end:?}"
    );
    assert_eq!(
        catches(SIGTERM),
        before,
        "the last launch did not put them back"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
