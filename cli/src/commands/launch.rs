//! `gridsync launch -n N -- COMMAND…`: N local ranks of a job (`gridsync::multi::processes::launch`).
//!
//! Its exit status tells how the job ended (`after_help` below); the rest of `gridsync` exits 1
//! on any error, so this command ends the process itself.

use clap::Args;
use gridsync::multi::processes::launch::{
    DEFAULT_GRACE, EXIT_LAUNCHER, EXIT_RANK_FAILED, EXIT_SIGNALLED, EXIT_TIMED_OUT, LaunchOptions,
    MAX_LINE_BYTES, launch,
};
use gridsync::{Error, Result};
use std::ffi::OsString;
use std::time::Duration;

/// The longest `--timeout` or `--grace` taken (about 116 days): a `Duration` from seconds
/// must stay far from overflow.
const MAX_SECONDS: f64 = 1e7;

#[derive(Args)]
#[command(after_help = EXIT_HELP)]
pub struct LaunchArgs {
    /// Ranks to start on this node (each gets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
    /// MASTER_ADDR=127.0.0.1, MASTER_PORT, GRIDSYNC_JOB and the job's secret GRIDSYNC_TOKEN:
    /// the launcher's own if it has one, else a new random one, never printed).
    #[arg(
        short = 'n',
        long = "nproc",
        visible_alias = "nproc-per-node",
        value_name = "N",
        required_unless_present = "old_ranks"
    )]
    ranks: Option<u32>,
    /// Refused: `--ranks` is multi's (where a rank learns who it is); the count of ranks to
    /// start is -n/--nproc.
    #[arg(long = "ranks", hide = true, value_name = "N")]
    old_ranks: Option<String>,
    /// Rank 0's rendezvous port [default: a free one].
    #[arg(long)]
    port: Option<u16>,
    /// Pass each rank's lines as they are, without the `[rank] ` prefix (lines longer than
    /// 64 KiB are still passed in pieces of 64 KiB, one line each).
    #[arg(long)]
    no_prefix: bool,
    /// Stop every rank and fail after this many seconds [default: no bound but the ranks'
    /// own].
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// When stopping ranks: seconds between SIGTERM to each rank's process group and SIGKILL
    /// [default: 5; 0: SIGKILL at once].
    #[arg(long, value_name = "SECONDS")]
    grace: Option<f64>,
    /// The command each rank runs (`gridsync` is this executable), after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// The exit statuses, for `--help`.
const EXIT_HELP: &str = "Exit status:\n  \
     0      every rank exited with status 0\n  \
     1      a rank failed (non-zero status or killed; the message names it and its status); \
     the others were stopped\n  \
     2      the command line could not be parsed\n  \
     124    the job ran past --timeout; every rank was stopped\n  \
     125    the launcher could not run the job (bad options, a GRIDSYNC_TOKEN the ranks would \
     refuse, a rank that cannot start)\n  \
     128+N  the launcher got signal N (130: Ctrl-C, 143: SIGTERM, 129: SIGHUP); every rank was \
     stopped\n\
     Stopping sends SIGTERM to each running rank's process group, then SIGKILL after --grace; \
     every rank's group dies with the launcher, even if it is killed with SIGKILL.";

pub fn command(args: &LaunchArgs) -> Result<()> {
    if args.old_ranks.is_some() {
        clap::Error::raw(
            clap::error::ErrorKind::UnknownArgument,
            "`launch` counts its ranks with -n/--nproc N; --ranks is multi's option (where a \
             rank learns who it is: gridsync launch -n 2 -- gridsync multi reduce --ranks env)\n",
        )
        .exit()
    }
    let opts = match options(args) {
        Ok(o) => o,
        Err(e) => end_with(EXIT_LAUNCHER, &e),
    };
    let Some((program, rest)) = args.command.split_first() else {
        end_with(
            EXIT_LAUNCHER,
            &Error::InvalidInput("no command after --".into()),
        )
    };
    let outcome = match launch(&opts, program, rest) {
        Ok(o) => o,
        Err(e) => end_with(EXIT_LAUNCHER, &e),
    };
    match outcome.check() {
        Ok(()) => Ok(()),
        Err(e) => end_with(outcome.exit_code(), &e),
    }
}

/// Prints `e` as `gridsync` prints every error, and exits with `code`.
fn end_with(code: i32, e: &Error) -> ! {
    eprintln!("gridsync: {e}");
    std::process::exit(code)
}

/// The options, checked.
fn options(args: &LaunchArgs) -> Result<LaunchOptions> {
    let timeout = args
        .timeout
        .map(|t| seconds("--timeout", t, false))
        .transpose()?;
    let grace = match args.grace {
        Some(g) => seconds("--grace", g, true)?,
        None => DEFAULT_GRACE,
    };
    Ok(LaunchOptions {
        ranks: args.ranks.unwrap_or(0),
        port: args.port,
        prefix: !args.no_prefix,
        timeout,
        grace,
    })
}

/// `value` seconds of option `name`: finite, positive (or zero where `zero` is allowed), at
/// most [`MAX_SECONDS`].
fn seconds(name: &str, value: f64, zero: bool) -> Result<Duration> {
    let fits = value.is_finite() && value <= MAX_SECONDS && (value > 0.0 || zero && value == 0.0);
    if fits {
        Ok(Duration::from_secs_f64(value))
    } else {
        let what = if zero {
            "zero or more"
        } else {
            "a positive number of"
        };
        Err(Error::InvalidInput(format!(
            "{name} {value}: {what} seconds, at most {MAX_SECONDS}"
        )))
    }
}

// The help text names these numbers; a change to one must change it.
const _: () = assert!(
    EXIT_RANK_FAILED == 1
        && EXIT_TIMED_OUT == 124
        && EXIT_LAUNCHER == 125
        && EXIT_SIGNALLED == 128
        && MAX_LINE_BYTES == 64 * 1024
);
