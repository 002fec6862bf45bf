//! The `gridsync` command: arguments → topic function → report. Run with no arguments for the
//! tour of every demo.

use clap::{Parser, Subcommand};
use gridsync::bench::{copy, launch};
use gridsync::{Error, Gpu, Result, Target, race};
use serde::Serialize;
use std::io::{IsTerminal, Write};

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
    /// The CUDA device to use.
    #[arg(long, global = true, default_value_t = 0, value_name = "N")]
    device: u32,
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
    /// The data race of `x[0] += 1` and its atomic fix (Numba tutorial 4.1–4.2).
    Race {
        /// Blocks to launch.
        #[arg(long, default_value_t = race::BLOCKS)]
        blocks: u32,
        /// Threads per block.
        #[arg(long, default_value_t = race::THREADS_PER_BLOCK)]
        threads: u32,
    },
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
        /// Trials per measurement.
        #[arg(long, default_value_t = 50)]
        trials: u32,
        /// Back-to-back launches per host-cost trial.
        #[arg(long, default_value_t = 2000)]
        launches: u32,
    },
    /// Device-to-device copy bandwidth: the roofline of every other benchmark.
    Copy {
        /// Bytes per copy (at least a few times the L2 cache).
        #[arg(long, default_value_t = copy::DEFAULT_BYTES)]
        bytes: usize,
        /// Timed copies.
        #[arg(long, default_value_t = 20)]
        trials: u32,
    },
}

/// A one-line progress indicator on stderr, shown only on a terminal and never in JSON mode.
fn progress(enabled: bool, label: &'static str) -> impl FnMut(u32, u32) {
    let show = enabled && std::io::stderr().is_terminal();
    move |done, total| {
        if show {
            eprint!("\r{label}: {done}/{total}");
            if done == total {
                eprint!("\r\x1b[K");
            }
            let _ = std::io::stderr().flush();
        }
    }
}

fn print_json(value: &impl Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::InvalidInput(format!("JSON: {e}")))?;
    println!("{text}");
    Ok(())
}

fn print_info(gpu: &Gpu) {
    let i = gpu.info();
    println!("device {}: {}", i.ordinal, i.name);
    println!(
        "  compute capability  {}.{} (running the {} PTX)",
        i.compute_capability.0, i.compute_capability.1, i.ptx_arch
    );
    println!("  multiprocessors     {}", i.sm_count);
    println!(
        "  memory              {:.1} GiB, {}-bit bus, {} MHz",
        i.total_memory_bytes as f64 / (1u64 << 30) as f64,
        i.memory_bus_bits,
        i.memory_clock_khz / 1000
    );
    println!("  L2 cache            {} MiB", i.l2_bytes >> 20);
    println!("  SM clock            {} MHz", i.clock_khz / 1000);
    println!(
        "  threads             {} per block, {} per SM",
        i.max_threads_per_block, i.max_threads_per_sm
    );
    println!(
        "  shared memory       {} KiB per block ({} KiB opt-in), {} KiB per SM",
        i.shared_bytes_per_block >> 10,
        i.shared_bytes_per_block_optin >> 10,
        i.shared_bytes_per_sm >> 10
    );
    println!(
        "  cooperative launch  {}",
        if i.cooperative_launch { "yes" } else { "no" }
    );
    println!(
        "  driver              CUDA {}.{}",
        i.driver_version / 1000,
        i.driver_version % 1000 / 10
    );
}

fn print_race(r: &race::RaceReport) {
    println!(
        "race: {} blocks × {} threads, each adding 1 to x[0], on the {}",
        r.blocks, r.threads_per_block, r.target
    );
    println!(
        "  add_one        (x[0] = x[0] + 1)   x[0] = {:>6}   ({} of {} updates lost)",
        r.racy,
        r.lost(),
        r.expected
    );
    println!(
        "  add_one_atomic (atomic add)         x[0] = {:>6}   (exactly {})",
        r.atomic, r.expected
    );
    println!();
    for line in race::EXPLANATION.lines() {
        println!("  {line}");
    }
}

#[derive(Serialize)]
struct Tour {
    gpu: Option<gridsync::DeviceInfo>,
    no_gpu_reason: Option<String>,
    race: race::RaceReport,
}

fn tour(cli: &Cli) -> Result<()> {
    let (target, reason) = if cli.simulate {
        (Target::Sim, Some("--simulate was given".to_string()))
    } else {
        match Gpu::new(cli.device) {
            Ok(gpu) => (Target::Gpu(gpu), None),
            Err(e @ (Error::NoGpu(_) | Error::Unsupported(_))) => {
                (Target::Sim, Some(e.to_string()))
            }
            Err(e) => return Err(e),
        }
    };
    let race = race::run(&target)?;
    if cli.json {
        let gpu = match &target {
            Target::Gpu(g) => Some(g.info().clone()),
            Target::Sim => None,
        };
        return print_json(&Tour {
            gpu,
            no_gpu_reason: reason,
            race,
        });
    }
    match (&target, &reason) {
        (Target::Gpu(g), _) => print_info(g),
        (Target::Sim, Some(why)) => {
            println!("{why}: running the demos on the CPU simulator (kernels run as OS threads).");
        }
        (Target::Sim, None) => {}
    }
    println!();
    print_race(&race);
    Ok(())
}

fn run(cli: &Cli) -> Result<()> {
    let Some(command) = &cli.command else {
        return tour(cli);
    };
    match command {
        Command::Info => {
            let gpu = Gpu::new(cli.device)?;
            if cli.json {
                print_json(gpu.info())
            } else {
                print_info(&gpu);
                Ok(())
            }
        }
        Command::Race { blocks, threads } => {
            let target = Target::open(cli.device, cli.simulate)?;
            let r = race::run_shape(&target, *blocks, *threads)?;
            if cli.json {
                print_json(&r)
            } else {
                print_race(&r);
                Ok(())
            }
        }
        Command::Bench { which } => {
            let target = Target::open(cli.device, cli.simulate)?;
            match which {
                BenchCommand::Launch { trials, launches } => {
                    let opts = launch::LaunchBenchOptions {
                        launches_per_trial: *launches,
                        trials: *trials,
                    };
                    let b = launch::run(&target, opts, progress(!cli.json, "launch"))?;
                    if cli.json {
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
                BenchCommand::Copy { bytes, trials } => {
                    let b = copy::run(&target, *bytes, *trials, progress(!cli.json, "copy"))?;
                    if cli.json {
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
            }
        }
    }
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(&cli) {
        eprintln!("gridsync: {e}");
        std::process::exit(1);
    }
}
