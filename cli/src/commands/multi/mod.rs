//! `gridsync multi`: one library call over every GPU of the node, or one rank of a launched
//! job. The demos that print live here, over the library's `gridsync::multi`: [`report`] (one
//! process, one device against all), [`scope`] (the system-scope objects) and [`ranks`] (one
//! rank of a launched job).

mod print;
mod ranks;
mod report;
mod scope;

use super::output::progress;
use super::output::{parse_option, print_json_or};
use clap::{Args, ValueEnum};
use gpu::atomic::Scope;
use gridsync::multi::processes::{JoinOptions, RankOptions, World, discover};
use gridsync::multi::{DeviceList, DeviceSet, sum_bound};
use gridsync::{Error, Result};
use gridsync_cli::bench::multi::{self as bench, MultiBenchOptions};
use print::{print_bench, print_rank_report, print_report, print_scope};
use ranks::RankInput;
use scope::ScopeOptions;
use serde::Serialize;
use std::time::Duration;

/// The operations, as the command line names them and the reports write them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MultiOp {
    /// Σ (f64 accumulation), min and max of uniform floats in [-1, 1).
    Reduce,
    /// A 256-bin histogram of uniform bytes.
    Histogram,
    /// Floats above 0.5.
    CountAbove,
    /// A counter and a mutex in device 0's memory, used by every device at once, at system
    /// and at device scope.
    Lock,
    /// A barrier over one grid per device, at system and at device scope.
    Barrier,
}

#[derive(Args)]
pub struct MultiArgs {
    /// What to run.
    #[arg(value_enum)]
    op: MultiOp,
    /// The devices: all, or ordinals such as 0,1 (on the simulator, that many simulated
    /// devices; all means 2).
    #[arg(long, default_value = "all", value_parser = parse_option::<DeviceList>)]
    devices: DeviceList,
    /// Elements of the input (floats, or bytes for the histogram) [default: 100000000 on a GPU,
    /// 100003 on the simulator].
    #[arg(long, value_name = "N")]
    len: Option<usize>,
    /// histogram: bytes of the input (its elements are bytes: the same as --len).
    #[arg(long, value_name = "N", conflicts_with_all = ["len", "input"])]
    bytes: Option<usize>,
    /// Timed runs of each (the median is shown).
    #[arg(long, default_value_t = 5)]
    repeats: u32,
    /// lock, barrier: blocks per device [default: per object, from the SM count].
    #[arg(long)]
    blocks: Option<u32>,
    /// lock, barrier: threads per block.
    #[arg(long)]
    threads: Option<u32>,
    /// lock: operations per thread; barrier: rounds.
    #[arg(long = "iterations", value_name = "N", visible_alias = "iters")]
    iters: Option<u32>,
    /// Host threads, in all, that fill the uploads' staging buffers [default:
    /// GRIDSYNC_COPIERS, else the host's cores].
    #[arg(long, value_name = "N")]
    copiers: Option<usize>,
    /// Run as one rank of a launched job (one process per GPU): the rank, world size and
    /// rendezvous address from the options below, else the launcher's environment (torchrun,
    /// gridsync launch: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; Slurm:
    /// SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID; Open MPI: OMPI_COMM_WORLD_*). The GPU is
    /// --device, else the local rank's.
    #[arg(long, value_enum, value_name = "FROM")]
    ranks: Option<RanksFrom>,
    /// With --ranks: this process's rank.
    #[arg(long, requires = "ranks")]
    rank: Option<u32>,
    /// With --ranks: ranks in the job.
    #[arg(long, requires = "ranks", value_name = "N")]
    world_size: Option<u32>,
    /// With --ranks: this rank's place among its node's ranks (its GPU unless --device).
    #[arg(long, requires = "ranks")]
    local_rank: Option<u32>,
    /// With --ranks: where rank 0 listens [default: MASTER_ADDR:MASTER_PORT].
    #[arg(long, requires = "ranks", value_name = "HOST:PORT")]
    rendezvous: Option<String>,
    /// With --ranks, rank 0: the address of this host to listen on, at the rendezvous port
    /// [default: the rendezvous address itself, e.g. 127.0.0.1 only under gridsync launch;
    /// GRIDSYNC_RENDEZVOUS_BIND]. `0.0.0.0` or `::` listens on every interface: for a rank 0
    /// whose host name resolves to a loopback address on its own node. Every rank proves the
    /// job's secret (GRIDSYNC_TOKEN) wherever rank 0 listens.
    #[arg(long, requires = "ranks", value_name = "HOST")]
    rendezvous_bind: Option<String>,
    /// With --ranks: seconds the rendezvous, NCCL's set-up and each exchange may take before
    /// the rank gives up with an error.
    #[arg(
        long,
        requires = "ranks",
        default_value_t = 60.0,
        value_name = "SECONDS"
    )]
    rendezvous_timeout: f64,
    /// With --ranks: combine the ranks' partials on the hosts over the rendezvous connections,
    /// even where every rank has NCCL.
    #[arg(long, requires = "ranks")]
    host_combine: bool,
    /// With --ranks: the input, read by byte range (each rank its slice): bytes for the
    /// histogram, raw little-endian f32 (.f32, .bin) for reduce and count-above [default: the
    /// generated input of --len].
    #[arg(long, requires = "ranks", value_name = "FILE", conflicts_with = "len")]
    input: Option<std::path::PathBuf>,
    /// With --ranks, histogram: 256 bins, 128 (ASCII, bytes ≥ 128 not counted), or 65536 (of
    /// 16-bit values: token ids, samples; a file is raw little-endian u16).
    #[arg(long, default_value_t = 256, requires = "ranks")]
    bins: u32,
    /// With --ranks, histogram: rank 0 writes every bin's count to FILE — NumPy's .npy (u64)
    /// where the name ends in .npy, else CSV (`bin,count`, then a line per bin).
    #[arg(long, requires = "ranks", value_name = "FILE")]
    output: Option<std::path::PathBuf>,
}

impl MultiArgs {
    /// `--len`, or `--bytes` for the histogram (whose elements are bytes).
    fn elements(&self) -> Result<Option<usize>> {
        match (self.bytes, self.op) {
            (Some(_), MultiOp::Histogram) if self.bins == 65536 => Err(Error::InvalidInput(
                "--bytes sizes a byte histogram; 65536 bins count --len 16-bit values".into(),
            )),
            (Some(n), MultiOp::Histogram) => Ok(Some(n)),
            (Some(_), _) => Err(Error::InvalidInput(
                "--bytes sizes the histogram's input; reduce and count-above take --len (floats)"
                    .into(),
            )),
            (None, _) => Ok(self.len),
        }
    }

    /// Whether this is one rank of a launched job (`--ranks`).
    pub fn is_rank(&self) -> bool {
        self.ranks.is_some()
    }
}

/// Where a rank learns who it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RanksFrom {
    /// The options given, else the launcher's environment.
    Env,
}

/// `--copiers`, else the `GRIDSYNC_COPIERS` variable, else none (the library's default).
fn copiers(option: Option<usize>) -> Result<Option<usize>> {
    let (given, what) = match (option, std::env::var("GRIDSYNC_COPIERS")) {
        (Some(n), _) => (n.to_string(), "--copiers"),
        (None, Ok(v)) => (v, "GRIDSYNC_COPIERS"),
        (None, Err(_)) => return Ok(None),
    };
    match given.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(Some(n)),
        _ => Err(Error::InvalidInput(format!(
            "{what} {given}: a number of host threads, at least 1"
        ))),
    }
}

pub fn command(device: Option<u32>, simulate: bool, args: &MultiArgs, json: bool) -> Result<()> {
    if args.ranks.is_some() {
        return rank_command(device, simulate, args, json);
    }
    let mut set = DeviceSet::open(&args.devices, simulate)?;
    if let Some(c) = copiers(args.copiers)? {
        set.set_copiers(c);
    }
    let op = args.op;
    if matches!(op, MultiOp::Lock | MultiOp::Barrier) {
        return scope_command(&set, op, simulate, args, json);
    }
    let len = args
        .elements()?
        .unwrap_or(if simulate { 100_003 } else { 100_000_000 });
    let bytes_each = if args.op == MultiOp::Histogram { 1 } else { 4 };
    gridsync::runtime::memory::check_host("--len", (len as u64).saturating_mul(bytes_each * 2))?;
    let r = report::run(&set, op, len, args.repeats)?;
    print_json_or(json, &r, print_report)
}

/// `--ranks env`: this process as one rank of a launched job.
fn rank_command(device: Option<u32>, simulate: bool, args: &MultiArgs, json: bool) -> Result<()> {
    let op = args.op;
    if matches!(op, MultiOp::Lock | MultiOp::Barrier) {
        return Err(not_data(op));
    }
    if let Some(path) = &args.output {
        if op != MultiOp::Histogram {
            return Err(Error::InvalidInput(
                "--output writes a histogram's counts: multi histogram --ranks".into(),
            ));
        }
        // Before the job starts, not after it ran.
        gridsync::histogram::counts_file::check_output(path)?;
    }
    if !(args.rendezvous_timeout.is_finite() && args.rendezvous_timeout > 0.0) {
        return Err(Error::InvalidInput(format!(
            "--rendezvous-timeout {}: a positive number of seconds",
            args.rendezvous_timeout
        )));
    }
    let timeout = Duration::from_secs_f64(args.rendezvous_timeout.min(1e6));
    let me = discover(&RankOptions {
        rank: args.rank,
        world: args.world_size,
        local_rank: args.local_rank,
        address: args.rendezvous.clone(),
        bind: args.rendezvous_bind.clone(),
    })?;
    let input = match &args.input {
        Some(p) => RankInput::File(p.clone()),
        None => {
            let len = args
                .elements()?
                .unwrap_or(if simulate { 100_003 } else { 100_000_000 });
            // This rank's slice, generated and kept while it is checked.
            let each = match (args.op, args.bins) {
                (MultiOp::Histogram, 65536) => 2,
                (MultiOp::Histogram, _) => 1,
                _ => 4,
            };
            let slice = (len as u64).div_ceil(u64::from(me.world.max(1)));
            gridsync::runtime::memory::check_host("--len", slice.saturating_mul(each * 2))?;
            RankInput::Generated(len)
        }
    };
    let opts = JoinOptions {
        device,
        simulate,
        timeout,
        host_combine: args.host_combine,
    };
    let world = World::join(me, &opts)?;
    let refused = world.links().refusals();
    if let Some(warning) = &refused.unguarded {
        eprintln!("warning: {warning}");
    }
    if refused.count > 0 {
        // Who knocked at the rendezvous without the job's secret: rank 0's record.
        eprintln!(
            "rank 0 refused {} connection(s) at the rendezvous: {}",
            refused.count,
            refused.reasons.join("; ")
        );
    }
    let threshold = gridsync::count_above::DEFAULT_THRESHOLD;
    let r = ranks::run(&world, op, &input, args.bins, threshold, args.repeats)?;
    // Every rank checked its result; rank 0 speaks for the job.
    if world.rank().rank == 0 {
        if let (Some(path), Some(bins)) = (&args.output, &r.bins) {
            gridsync::histogram::counts_file::write_counts(path, bins)?;
        }
        print_json_or(json, &r, print_rank_report)?;
    }
    Ok(())
}

fn scope_command(
    set: &DeviceSet,
    op: MultiOp,
    simulate: bool,
    args: &MultiArgs,
    json: bool,
) -> Result<()> {
    let first = match &args.devices {
        DeviceList::Ordinals(v) => v.first().copied().unwrap_or(0),
        DeviceList::All => 0,
    };
    let one = DeviceSet::open(&DeviceList::Ordinals(vec![first]), simulate)?;
    let opts = ScopeOptions {
        blocks: args.blocks,
        threads: args.threads,
        iters: args.iters,
    };
    let r = scope::run(set, &one, op, opts)?;
    print_json_or(json, &r, print_scope)
}

#[derive(Args)]
pub struct BenchArgs {
    /// The devices of the "all" side (the one-GPU side is the first of them).
    #[arg(long, default_value = "all", value_parser = parse_option::<DeviceList>)]
    devices: DeviceList,
    /// Floats of the sum and the count.
    #[arg(long = "len", value_name = "N", visible_alias = "floats", default_value_t = bench::DEFAULT_FLOATS)]
    floats: usize,
    /// Bytes of the histogram.
    #[arg(long, default_value_t = bench::DEFAULT_BYTES)]
    bytes: usize,
    #[command(flatten)]
    repeats: super::output::Repeats10,
    /// Combine with peer copies even where NCCL is installed.
    #[arg(long)]
    peer_copies: bool,
    /// Host threads, in all, that fill the uploads' staging buffers [default:
    /// GRIDSYNC_COPIERS, else the host's cores].
    #[arg(long, value_name = "N")]
    copiers: Option<usize>,
}

pub fn bench_command(args: &BenchArgs, json: bool) -> Result<()> {
    let opts = MultiBenchOptions {
        devices: args.devices.clone(),
        floats: args.floats,
        bytes: args.bytes,
        trials: args.repeats.trials,
        peer_copies: args.peer_copies,
        copiers: copiers(args.copiers)?,
    };
    let b = bench::run(&opts, progress(!json, "bench multi"))?;
    print_json_or(json, &b, print_bench)
}

/// The tour's stop: Σ, min and max of `floats` floats over every device (checked against the
/// CPU), and a system-scope barrier across them (0 stale reads, or an error). Devices that
/// cannot map each other's memory skip the barrier with a note.
pub fn tour_stop(
    simulate: bool,
    floats: usize,
    text: bool,
) -> Result<(String, Option<(String, f64)>)> {
    use gridsync::multi::devices::peer;
    use gridsync::reduce::{max_cpu, min_cpu, sum_abs_cpu, sum_cpu};
    use gridsync::{LaunchConfig, Target};
    let set = DeviceSet::open(&DeviceList::All, simulate)?;
    let mut x = vec![0f32; floats];
    gridsync_cli::bench::fill::fill_floats(&mut x);
    let (s, lo, hi) = gridsync::multi::sum_min_max(&set, &x)?;
    let want = sum_cpu(&x);
    let bound = sum_bound(sum_abs_cpu(&x), set.len());
    if (s - want).abs() > bound || Some(lo) != min_cpu(&x) || Some(hi) != max_cpu(&x) {
        return Err(Error::Mismatch(format!(
            "Σ {s}, min {lo}, max {hi} over {} device(s); CPU Σ {want}",
            set.len()
        )));
    }
    let (cfg, rounds) = match &set.targets()[0] {
        Target::Gpu(g) => (LaunchConfig::linear(g.info().sm_count, 64), 2000),
        Target::Sim => (LaunchConfig::linear(2, 32), 25),
    };
    let last = set.len() - 1;
    let timeout = std::time::Duration::from_secs(2);
    let barrier = match peer::barrier(&set, Scope::System, cfg, rounds, timeout, last) {
        Ok(b) if b.wrong == 0 => Some(b),
        Ok(b) => {
            return Err(Error::Mismatch(format!(
                "{} stale reads after a system-scope barrier",
                b.wrong
            )));
        }
        Err(Error::Unsupported(why)) => {
            if text {
                println!("  barrier skipped: {why}");
            }
            None
        }
        Err(e) => return Err(e),
    };
    // The simulator's times mean nothing: the barrier's checks are what it shows.
    let timed = |b: &peer::PeerRun| match simulate {
        true => String::new(),
        false => format!(" {:.2} µs,", b.ms * 1e3 / rounds as f64),
    };
    if text {
        println!(
            "  {} device(s): Σ, min and max of {floats} floats, a slice each, equal the CPU's",
            set.len()
        );
        if let Some(b) = &barrier {
            println!(
                "  a barrier over a grid on every device at system scope:{} no block saw a stale \
                 write in {} checks (gridsync multi barrier shows device scope failing)",
                timed(b),
                b.expected
            );
        }
    }
    let headline = match &barrier {
        Some(b) => format!(
            "{} device(s): Σ/min/max equal the CPU's; system-scope barrier,{} 0 stale",
            set.len(),
            timed(b)
        ),
        None => format!("{} device(s): Σ/min/max equal the CPU's", set.len()),
    };
    Ok((headline, None))
}

/// The error of lock or barrier (`op`) asked of a runner of data: a launched job's ranks, or
/// the one-process report.
fn not_data(op: MultiOp) -> Error {
    debug_assert!(matches!(op, MultiOp::Lock | MultiOp::Barrier));
    Error::InvalidInput(
        "lock and barrier share memory between the GPUs of one process: run them without \
         --ranks"
            .into(),
    )
}

/// The error of lock or barrier asked of a data operation's runner.
fn not_scope(op: MultiOp) -> Error {
    Error::InvalidInput(format!(
        "{op:?} runs over data, not on the system-scope objects"
    ))
}
