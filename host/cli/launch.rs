//! `gridsync launch -n N -- COMMAND…`: N local ranks of a job (`gridsync::multi::launch`).

use clap::Args;
use gridsync::Result;
use gridsync::multi::launch::{LaunchOptions, launch};
use std::ffi::OsString;
use std::time::Duration;

#[derive(Args)]
pub struct LaunchArgs {
    /// Ranks to start on this node (each gets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
    /// MASTER_ADDR=127.0.0.1, MASTER_PORT and GRIDSYNC_JOB).
    #[arg(short = 'n', long = "ranks", value_name = "N")]
    ranks: u32,
    /// Rank 0's rendezvous port [default: a free one].
    #[arg(long)]
    port: Option<u16>,
    /// Pass each rank's lines as they are, without the `[rank] ` prefix.
    #[arg(long)]
    no_prefix: bool,
    /// Stop every rank and fail after this many seconds [default: no bound but the ranks'
    /// own].
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// The command each rank runs (`gridsync` is this executable), after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

pub fn command(args: &LaunchArgs) -> Result<()> {
    let timeout = match args.timeout {
        Some(t) if t.is_finite() && t > 0.0 => Some(Duration::from_secs_f64(t.min(1e7))),
        Some(t) => {
            return Err(gridsync::Error::InvalidInput(format!(
                "--timeout {t}: a positive number of seconds"
            )));
        }
        None => None,
    };
    let opts = LaunchOptions {
        ranks: args.ranks,
        port: args.port,
        prefix: !args.no_prefix,
        timeout,
    };
    let (program, rest) = args
        .command
        .split_first()
        .ok_or_else(|| gridsync::Error::InvalidInput("no command after --".into()))?;
    launch(&opts, program, rest).map(drop)
}
