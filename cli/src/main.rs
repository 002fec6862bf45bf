//! The `gridsync` command: arguments → topic function → report. Run with no arguments for the
//! tour: every topic once, small, checked against the CPU.

use clap::{CommandFactory, Parser, Subcommand};
use gridsync::runtime::copy;
use gridsync::{Gpu, Result, Target, race};
use gridsync_cli::bench::launch;

mod commands;
use commands::basics::{print_info, print_race};
use commands::output::{print_json, print_json_or, progress};
use commands::tour::tour;

#[derive(Parser)]
#[command(
    name = "gridsync",
    version,
    about = "GPU synchronization primitives, demonstrated on your GPU"
)]
struct Cli {
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    /// The CUDA device to use [default: 0; with multi --ranks, the local rank's].
    #[arg(long, global = true, value_name = "N")]
    device: Option<u32>,
    /// Run kernels on the CPU simulator instead of a GPU.
    #[arg(long, global = true)]
    simulate: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Print the device report: name, compute capability, SMs, memory, limits.
    Info,
    /// What this machine has of what gridsync needs — the NVIDIA driver, every GPU and pair of
    /// GPUs, the pinned toolchain and rust-src, ptxas, NCCL, mdbook — and for each missing
    /// piece the command that fixes it; exit status 4 when a required one is missing.
    Doctor,
    /// The data race of `x[0] += 1` and its atomic fix (Numba tutorial 4.1–4.2).
    Race {
        /// Blocks to launch.
        #[arg(long, default_value_t = race::BLOCKS)]
        blocks: u32,
        /// Threads per block.
        #[arg(long, default_value_t = race::THREADS_PER_BLOCK)]
        threads: u32,
    },
    /// Every lock of the progression (Numba 4.5, the blog's locks, Mutex, ticket lock), checked
    /// and timed, and what a lock held forever does.
    #[command(alias = "mutex")]
    Locks {
        /// Blocks of the one launch shape to run (with --threads) [default: the sources' four
        /// shapes and the full GPU].
        #[arg(long, requires = "threads")]
        blocks: Option<u32>,
        /// Threads per block of the one launch shape to run (with --blocks).
        #[arg(long, requires = "blocks")]
        threads: Option<u32>,
        /// Launch shapes as BLOCKSxTHREADS (repeatable): several shapes in one run.
        #[arg(
            long = "shape",
            value_parser = gridsync_cli::options::parse_shape,
            conflicts_with = "blocks"
        )]
        shapes: Vec<gridsync::locks::Shape>,
    },
    /// Count the elements above a threshold: a lock, atomics per element, per warp, per block
    /// (the CUDA lock blog's `GtThrCntKernel`).
    CountAbove(commands::count_above::CountAboveArgs),
    /// Dot product finished on the host, under a mutex, with atomics, and fast (Numba 4.6).
    Dot(commands::dot::DotArgs),
    /// Byte histograms: global atomics (Numba 4.3), shared memory (4.4), per warp, 16-byte
    /// loads, per lane; letter counts, the block-count sweep (--sweep), plots.
    Histogram(commands::histogram::HistogramArgs),
    /// Full reductions: Numba's partial sums, the CUDA book's atomicAdd per block (1e8 × 1.23),
    /// shuffles, the deterministic last-block single pass, 16-byte loads; sums, min and max.
    Reduce(commands::reduce::ReduceArgs),
    /// Normalize arrays on many streams and on one (the Numba tutorial's streams and events):
    /// per-stream events, total, overlap, the timeline (--plot), pinned vs pageable memory.
    Streams(commands::streams::StreamsArgs),
    /// CUDA's atomic functions, each checked against a sequential model, and the CUDA book's
    /// `double` add from `atomicCAS` next to the native one (CUDA book 9.2).
    Atomics(commands::atomics::AtomicsArgs),
    /// A barrier over every block of a grid, on the article's X→P→X iteration: many launches,
    /// a CUDA graph, one launch with GridBarrier (plain and cooperative), and the broken
    /// barriers with where they go wrong; --sweep times them against the number of blocks.
    Barrier(commands::barrier::BarrierArgs),
    /// Split-phase barriers (sm_90 `mbarrier`): a relay with sync_threads, split into arrive and
    /// wait, and the mistakes — reading before waiting, a parity never moved on, waiting before
    /// arriving (a deadlock the bounded wait turns into an error).
    Mbarrier(commands::mbarrier::MbarrierArgs),
    /// Producer/consumer pipelines (sm_90 bulk copies into a ring of shared-memory stages, a
    /// full and an empty mbarrier per stage), and the mistakes — reading before the copy lands,
    /// refilling a stage still being read.
    Pipeline(commands::pipeline::PipelineArgs),
    /// Neighbor lists (CUDA book 9.3): the book's O(N²) kernels with and without atomicAdd,
    /// the mistake of not using atomicAdd's result, and an O(N) cell list; the book's
    /// neighbor.txt (--output) and the sheet with its bonds (--plot).
    Neighbor(commands::neighbor::NeighborArgs),
    /// Litmus tests of the memory model (MP, SB, LB, CoRR, CoWW, S, R, 2+2W, WRC, IRIW), each
    /// in every variant (plain, volatile, relaxed, release/acquire, fences) and placement, on the
    /// GPU under stress or on the simulator's memory (--weak); every outcome counted and judged;
    /// non-zero exit on a forbidden one.
    Litmus(commands::litmus::LitmusArgs),
    /// Every GPU of the node: one library call (reduce, histogram, count-above) over a slice
    /// per device, checked against the CPU; a counter, a lock and a barrier shared by the GPUs
    /// at system and at device scope (lock, barrier).
    Multi(commands::multi::MultiArgs),
    /// Starts N ranks of a job on this node, like `torchrun --standalone`: each rank gets the
    /// torchrun variables (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT); output is
    /// forwarded with a rank prefix; one rank failing stops the others and fails the launch.
    /// E.g. `gridsync launch -n 2 -- gridsync multi reduce --ranks env`.
    Launch(commands::launch::LaunchArgs),
    /// An endurance run: several threads and streams per device run the locks, the grid
    /// barrier, reductions, histograms, normalization and neighbor lists on random inputs of
    /// random sizes, each checked against the CPU, for a bounded time; non-zero exit on any
    /// failure or device memory not given back.
    Stress(commands::stress::StressArgs),
    /// The checker, on the simulator, no GPU needed: every lesson and library kernel at small
    /// shapes with every access followed — data races, scope races, barrier divergence,
    /// uninitialized shared memory and stuck waits reported with both source lines; each broken
    /// kernel must be found, every other one clean (exit status 4 otherwise).
    Check(commands::check::CheckArgs),
    /// A new project of your own kernels on gridsync's primitives (like `cargo new`): the host
    /// program, the `kernels/` device crate, the PTX build and the pinned toolchain; `cargo run
    /// -- --simulate` in it works at once.
    New(commands::new::NewArgs),
    /// Benchmarks (GPU only).
    Bench {
        #[command(subcommand)]
        which: BenchCommand,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Host cost of a launch, launch + sync round trip, event-timed empty kernel.
    Launch {
        #[command(flatten)]
        repeats: commands::output::Repeats50,
        /// Back-to-back launches per host-cost trial.
        #[arg(long, default_value_t = 2000)]
        launches: u32,
    },
    /// What ordering costs at block, device and system scope: release stores, acq_rel
    /// atomics, fence.sc.
    Scopes {
        /// Operations per thread per launch.
        #[arg(long, default_value_t = 64)]
        iters: u32,
        #[command(flatten)]
        repeats: commands::output::Repeats10,
    },
    /// Critical sections per second of every lock variant and shape (each cell timed
    /// `--repeats` times, fewer if its 3 s budget runs out).
    #[command(alias = "mutex")]
    Locks {
        #[command(flatten)]
        repeats: commands::output::Repeats10,
        /// Also sweep the mutex's and the ticket lock's back-off.
        #[arg(long)]
        sweep: bool,
    },
    /// Bandwidth of the count-above kernels at 10⁷ and 10⁹ floats, against the copy.
    CountAbove(commands::count_above::BenchArgs),
    /// Bandwidth of the dot kernels at 10⁷ and 10⁹ elements, against the copy.
    Dot(commands::dot::BenchArgs),
    /// Bandwidth of the histogram kernels on 5.6 MB and 1 GiB of text and 1 GiB of random
    /// bytes, against the copy.
    Histogram(commands::histogram::BenchArgs),
    /// Bandwidth of the 65 536-bin kernels (global atomics, bin ranges, clusters of 2–16) on
    /// 10⁹ uniform and 10⁹ token-like 16-bit values, against the copy.
    HistogramU16(commands::histogram::wide::Bench16Args),
    /// Time and bandwidth of the reduction kernels at 10⁸ and 10⁹ floats, against the copy.
    Reduce(commands::reduce::BenchArgs),
    /// Atomic operations per second: shared vs global, contended vs spread, block/device/system.
    Atomics(commands::atomics::BenchArgs),
    /// Host↔device copy bandwidth, pinned and pageable, each way and both at once.
    Transfer(commands::streams::TransferArgs),
    /// What one grid barrier costs at 1 block per SM and at the largest co-resident grid,
    /// against an empty launch and a graph of empty kernels.
    Barrier(commands::barrier::BenchArgs),
    /// What one cluster barrier costs (sm_90): clusters of 2 to 16 blocks, release/acquire and
    /// relaxed arrivals, split with work between arrival and wait.
    Cluster(commands::cluster::BenchArgs),
    /// The neighbor-list cell list from 10⁴ to 10⁷ graphene atoms, phase by phase, and the
    /// book's O(N²) kernels up to 10⁶, in atoms per second.
    Neighbor(commands::neighbor::BenchArgs),
    /// One GPU against every GPU of the node: 10⁹-float sums and counts and a 4 GiB
    /// histogram, input on the devices and in pinned host memory, the combine step, the bus.
    Multi(commands::multi::BenchArgs),
    /// Device-to-device copy bandwidth: the roofline of every other benchmark.
    Copy {
        /// Bytes per copy (at least a few times the L2 cache).
        #[arg(long, default_value_t = copy::DEFAULT_BYTES)]
        bytes: usize,
        #[command(flatten)]
        repeats: commands::output::Repeats,
    },
}

/// Which of the global options mean something to a subcommand.
struct Globals {
    json: bool,
    device: bool,
    simulate: bool,
}

impl Globals {
    const ALL: Globals = Globals {
        json: true,
        device: true,
        simulate: true,
    };
}

/// The global options the command takes, and why not the others.
fn takes(command: &Option<Command>) -> (Globals, &'static str) {
    let gpu_only = "it measures a GPU; the simulator's speed says nothing about one";
    match command {
        None => (Globals::ALL, ""),
        Some(Command::Info) => (
            Globals {
                simulate: false,
                ..Globals::ALL
            },
            "it describes a real GPU",
        ),
        Some(Command::Check(_)) => (
            Globals {
                json: true,
                device: false,
                simulate: false,
            },
            "it always runs on the simulator, with or without a GPU",
        ),
        Some(Command::Doctor) => (
            Globals {
                json: true,
                device: false,
                simulate: false,
            },
            "it looks at every GPU and at the machine",
        ),
        Some(Command::New(_)) => (
            Globals {
                json: true,
                device: false,
                simulate: false,
            },
            "it writes a project and runs nothing (run the project with them)",
        ),
        Some(Command::Launch(_)) => (
            Globals {
                json: false,
                device: false,
                simulate: false,
            },
            "it starts ranks and prints their output (give them to the ranks' command, after --)",
        ),
        Some(Command::Multi(args)) => (
            Globals {
                device: args.is_rank(),
                ..Globals::ALL
            },
            "one process uses the GPUs of --devices (--device picks a rank's GPU, with --ranks)",
        ),
        Some(Command::Bench {
            which: BenchCommand::Multi(_),
        }) => (
            Globals {
                json: true,
                device: false,
                simulate: false,
            },
            "it measures the GPUs of --devices",
        ),
        Some(Command::Bench { .. }) => (
            Globals {
                simulate: false,
                ..Globals::ALL
            },
            gpu_only,
        ),
        Some(_) => (Globals::ALL, ""),
    }
}

/// A usage error (exit status 2) for a global option the command does not take.
fn check_globals(cli: &Cli) {
    let (takes, why) = takes(&cli.command);
    let refused = [
        (cli.json && !takes.json, "--json"),
        (cli.device.is_some() && !takes.device, "--device"),
        (cli.simulate && !takes.simulate, "--simulate"),
    ];
    if let Some((_, flag)) = refused.iter().find(|(r, _)| *r) {
        let matches = Cli::command().get_matches();
        let name = match matches.subcommand() {
            Some(("bench", bench)) => {
                format!("bench {}", bench.subcommand_name().unwrap_or_default())
            }
            Some((name, _)) => name.to_string(),
            None => String::new(),
        };
        Cli::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                format!("`{name}` does not take {flag}: {why}"),
            )
            .exit();
    }
}

/// Runs the subcommand `cli` names, or the tour when it names none.
fn run(cli: &Cli) -> Result<()> {
    let device = cli.device.unwrap_or(0);
    let Some(command) = &cli.command else {
        return tour(cli);
    };
    let open = || Target::open(device, cli.simulate);
    match command {
        Command::Info => info(device, cli.json),
        Command::Doctor => commands::doctor::command(cli.json),
        Command::Race { blocks, threads } => race_command(&open()?, *blocks, *threads, cli.json),
        Command::Locks {
            blocks,
            threads,
            shapes,
        } => locks_command(&open()?, (*blocks, *threads), shapes, cli.json),
        Command::CountAbove(args) => commands::count_above::command(&open()?, args, cli.json),
        Command::Dot(args) => commands::dot::command(&open()?, args, cli.json),
        Command::Histogram(args) => {
            commands::histogram::command(device, cli.simulate, args, cli.json)
        }
        Command::Mbarrier(args) => commands::mbarrier::command(&open()?, args, cli.json),
        Command::Pipeline(args) => commands::pipeline::command(&open()?, args, cli.json),
        Command::Reduce(args) => commands::reduce::command(&open()?, args, cli.json),
        Command::Streams(args) => commands::streams::command(&open()?, args, cli.json),
        Command::Atomics(args) => commands::atomics::command(&open()?, args, cli.json),
        Command::Barrier(args) => commands::barrier::command(&open()?, args, cli.json),
        Command::Neighbor(args) => commands::neighbor::command(&open()?, args, cli.json),
        Command::Litmus(args) => commands::litmus::command(device, cli.simulate, args, cli.json),
        Command::Multi(args) => commands::multi::command(cli.device, cli.simulate, args, cli.json),
        Command::Stress(args) => commands::stress::command(device, cli.simulate, args, cli.json),
        Command::Check(args) => commands::check::command(args, cli.json),
        Command::New(args) => commands::new::command(args, cli.json),
        Command::Launch(args) => commands::launch::command(args),
        Command::Bench { which } => bench(&open()?, which, cli.json),
    }
}

/// `gridsync info`: the device's properties.
fn info(device: u32, json: bool) -> Result<()> {
    let gpu = Gpu::new(device)?;
    if json {
        print_json(gpu.info())
    } else {
        print_info(&gpu);
        Ok(())
    }
}

/// `gridsync race`: the lost-update race at one shape.
fn race_command(target: &Target, blocks: u32, threads: u32, json: bool) -> Result<()> {
    let r = race::run_shape(target, blocks, threads)?;
    if json {
        print_json(&r)
    } else {
        print_race(&r);
        Ok(())
    }
}

/// `gridsync locks`: the mutex demo at the one shape given, the shapes listed, or the
/// device's default shapes.
fn locks_command(
    target: &Target,
    one: (Option<u32>, Option<u32>),
    shapes: &[gridsync::locks::Shape],
    json: bool,
) -> Result<()> {
    let shapes = match one {
        (Some(blocks), Some(threads)) => vec![gridsync::locks::Shape { blocks, threads }],
        _ if shapes.is_empty() => gridsync::locks::default_shapes(target),
        _ => shapes.to_vec(),
    };
    let d = gridsync::locks::demo(target, &shapes, progress(!json, "mutex"))?;
    if json {
        print_json(&d)
    } else {
        commands::locks::print_demo(&d);
        Ok(())
    }
}

/// `gridsync bench <which>`: one benchmark on `target`.
fn bench(target: &Target, which: &BenchCommand, json: bool) -> Result<()> {
    match which {
        BenchCommand::Launch { repeats, launches } => {
            bench_launch(target, repeats.trials, *launches, json)
        }
        BenchCommand::Scopes { iters, repeats } => {
            let show = progress(!json, "scopes");
            let b = gridsync_cli::bench::scopes::run(target, *iters, repeats.trials, show)?;
            print_json_or(json, &b, commands::locks::print_scopes)
        }
        BenchCommand::Locks { repeats, sweep } => {
            let opts = gridsync_cli::bench::locks::MutexBenchOptions {
                trials: repeats.trials,
                sweep: *sweep,
                ..Default::default()
            };
            let b = gridsync_cli::bench::locks::run(target, opts, progress(!json, "mutex"))?;
            print_json_or(json, &b, commands::locks::print_bench)
        }
        BenchCommand::CountAbove(args) => commands::count_above::bench_command(target, args, json),
        BenchCommand::Dot(args) => commands::dot::bench_command(target, args, json),
        BenchCommand::Histogram(args) => commands::histogram::bench_command(target, args, json),
        BenchCommand::HistogramU16(args) => {
            commands::histogram::wide::bench_command(target, args, json)
        }
        BenchCommand::Reduce(args) => commands::reduce::bench_command(target, args, json),
        BenchCommand::Atomics(args) => commands::atomics::bench_command(target, args, json),
        BenchCommand::Transfer(args) => commands::streams::transfer_command(target, args, json),
        BenchCommand::Barrier(args) => commands::barrier::bench_command(target, args, json),
        BenchCommand::Cluster(args) => commands::cluster::bench_command(target, args, json),
        BenchCommand::Neighbor(args) => commands::neighbor::bench_command(target, args, json),
        BenchCommand::Multi(args) => commands::multi::bench_command(args, json),
        BenchCommand::Copy { bytes, repeats } => bench_copy(target, *bytes, repeats.trials, json),
    }
}

/// `gridsync bench launch`: the host's cost of a launch, and a launch's round trip.
fn bench_launch(target: &Target, trials: u32, launches: u32, json: bool) -> Result<()> {
    let opts = launch::LaunchBenchOptions {
        launches_per_trial: launches,
        trials,
    };
    let b = launch::run(target, opts, progress(!json, "launch"))?;
    if json {
        return print_json(&b);
    }
    println!(
        "launch benchmark on the {} (median of {} trials, µs)",
        b.device, b.host_us_per_launch.samples
    );
    println!("  {:<34} {:>9} {:>9} {:>9}", "", "median", "min", "max");
    for (name, s) in [
        ("host cost per launch", b.host_us_per_launch),
        ("launch + stream synchronize", b.launch_sync_us),
        ("event-timed empty kernel", b.event_timed_kernel_us),
    ] {
        println!(
            "  {name:<34} {:>9.2} {:>9.2} {:>9.2}",
            s.median, s.min, s.max
        );
    }
    Ok(())
}

/// `gridsync bench copy`: device-to-device copy bandwidth.
fn bench_copy(target: &Target, bytes: usize, trials: u32, json: bool) -> Result<()> {
    let b = copy::run(target, bytes, trials, progress(!json, "copy"))?;
    if json {
        return print_json(&b);
    }
    println!(
        "device-to-device copy on the {}: {} MiB, median of {} trials",
        b.device,
        b.bytes >> 20,
        b.ms.samples
    );
    println!(
        "  {:.3} ms per copy (min {:.3}, max {:.3}) = {:.0} GB/s read + written",
        b.ms.median, b.ms.min, b.ms.max, b.gb_per_s
    );
    Ok(())
}

/// Lets a closed pipe end the process quietly, as it ends `cat` or `grep`: Rust ignores
/// `SIGPIPE`, so `gridsync … | head` would otherwise panic in `println!` once `head` exits.
#[cfg(target_os = "linux")]
fn quiet_on_closed_pipe() {
    const SIGPIPE: i32 = 13;
    const SIG_DFL: usize = 0;
    unsafe extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
    }
    // SAFETY: restoring the default disposition of one signal, before any thread starts.
    unsafe { signal(SIGPIPE, SIG_DFL) };
}

#[cfg(not(target_os = "linux"))]
fn quiet_on_closed_pipe() {}

fn main() {
    quiet_on_closed_pipe();
    let cli = Cli::parse();
    check_globals(&cli);
    if let Err(e) = run(&cli) {
        eprintln!("gridsync: {e}");
        // A check that failed is told apart from a run that could not be made.
        let code = match e {
            gridsync::Error::Mismatch(_) => commands::output::EXIT_CHECK_FAILED,
            _ => 1,
        };
        std::process::exit(code);
    }
}
