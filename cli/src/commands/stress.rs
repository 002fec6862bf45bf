//! `gridsync stress`: the endurance run.

use super::output::{Bar, DEFAULT_SEED, parse_option, print_json_or};
use clap::Args;
use gridsync::multi::DeviceList;
use gridsync::{Error, Result};
use gridsync_cli::stress::{self, Op, Progress, StressOptions, StressReport};

#[derive(Args)]
pub struct StressArgs {
    /// How long to run, in seconds.
    #[arg(long, default_value_t = 60.0)]
    seconds: f64,
    /// The devices: all, or ordinals such as 0,1 [default: --device]; with two or more, a
    /// system-scope counter, lock and barrier across them run too.
    #[arg(long, value_parser = parse_option::<DeviceList>)]
    devices: Option<DeviceList>,
    /// Host threads per device, each with a stream of its own [default: 4, 2 on the simulator].
    #[arg(long, value_name = "N")]
    workers: Option<usize>,
    /// The operations, comma-separated [default: all of reduce, histogram, count-above,
    /// normalize, mutex, warp-leader, ticket, grid-barrier, neighbor].
    #[arg(long, value_delimiter = ',', value_parser = parse_option::<Op>)]
    ops: Vec<Op>,
    /// The base seed (printed): each operation's inputs derive from it; give another to explore
    /// other inputs.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Runs one operation again (the one --ops names) with the seed a failure printed.
    #[arg(long, value_name = "SEED", conflicts_with_all = ["seconds", "workers", "seed"])]
    replay: Option<u64>,
}

pub fn command(device: u32, simulate: bool, args: &StressArgs, json: bool) -> Result<()> {
    if let Some(seed) = args.replay {
        let [op] = args.ops[..] else {
            return Err(Error::InvalidInput(
                "--replay runs one operation: name it with --ops".into(),
            ));
        };
        let did = stress::replay(op, device, simulate, seed)?;
        println!("{}: {did}: matches the CPU", op.name());
        return Ok(());
    }
    let opts = StressOptions {
        seconds: args.seconds,
        devices: args
            .devices
            .clone()
            .unwrap_or(DeviceList::Ordinals(vec![device])),
        workers_per_device: args.workers.unwrap_or(if simulate { 2 } else { 4 }),
        ops: if args.ops.is_empty() {
            Op::ALL.to_vec()
        } else {
            args.ops.clone()
        },
        seed: args.seed,
        simulate,
    };
    let report = stress::run(&opts, progress(!json, opts.seconds))?;
    print_json_or(json, &report, print_report)?;
    if report.passed() {
        Ok(())
    } else {
        Err(Error::Mismatch(format!(
            "the endurance run failed: {} failed operation(s){}",
            report.failures,
            if report.memory.iter().any(|m| m.leaked) {
                ", device memory not given back"
            } else {
                ""
            }
        )))
    }
}

/// A bar of the run's seconds on a terminal, with the operations and failures so far.
fn progress(enabled: bool, seconds: f64) -> impl FnMut(Progress) {
    let mut bar = Bar::new(enabled, "stress", "{prefix} [{bar:30}] {pos}/{len} s {msg}");
    let total = seconds.ceil().max(1.0) as u64;
    move |p| {
        let at = format!("{} operations, {} failed", p.operations, p.failures);
        bar.set((p.seconds as u64).min(total - 1), total, Some(at));
    }
}

pub fn print_report(r: &StressReport) {
    println!(
        "stress on {}: {:.1} s, {} worker thread(s), seed {}",
        r.devices, r.seconds, r.workers, r.seed
    );
    println!(
        "  {} operations, {} failed ({:.0} per second)",
        r.operations,
        r.failures,
        r.operations as f64 / r.seconds.max(1e-9)
    );
    for t in &r.per_op {
        println!("  {:<14} {:>9} done {:>6} failed", t.op, t.done, t.failed);
    }
    if let Some(why) = &r.system_scope {
        println!("  system scope across devices not run: {why}");
    }
    for m in &r.memory {
        println!(
            "  device {}: {} MiB free before, {} after ({}{} MiB){}",
            m.device,
            m.free_before >> 20,
            m.free_after >> 20,
            if m.missing >= 0 { "−" } else { "+" },
            m.missing.unsigned_abs() >> 20,
            if m.leaked { ": LEAKED" } else { "" }
        );
    }
    for f in &r.first_failures {
        let replay = match (f.op.parse::<Op>(), f.device) {
            (Ok(_), Some(d)) => format!("--device {d} --ops {} --replay {}", f.op, f.seed),
            (Ok(_), None) => format!("--simulate --ops {} --replay {}", f.op, f.seed),
            (Err(_), _) => format!("seed {}", f.seed),
        };
        println!("  FAILED {} ({replay}): {}", f.op, f.error);
    }
}
