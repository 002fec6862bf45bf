//! `gridsync count-above` and `gridsync bench count-above`.

use super::output::{print_copy_roofline, print_json, progress};
use clap::Args;
use gridsync::bench::copy;
use gridsync::bench::count_above::{self as bench, CountAboveBench};
use gridsync::count_above::{
    CountAboveReport, CountOptions, DEFAULT_LEN, DEFAULT_SEED, DEFAULT_THRESHOLD, LOCK_PREFIX,
    SIM_DEFAULT_LEN, default_input, run,
};
use gridsync::input::read_f32_file;
use gridsync::{Result, Target};
use std::path::PathBuf;

#[derive(Args)]
pub struct CountAboveArgs {
    /// Read the array from FILE: raw little-endian f32 if the name ends in .f32 or .bin,
    /// otherwise numbers separated by spaces or newlines.
    #[arg(long, value_name = "FILE", conflicts_with = "len")]
    input: Option<PathBuf>,
    /// Count the elements strictly above T (NaN never counts).
    #[arg(long, value_name = "T", default_value_t = DEFAULT_THRESHOLD)]
    threshold: f32,
    /// Elements of the generated input, uniform in [0, 1) [default: 10000000 on a GPU, 10000 on
    /// the simulator].
    #[arg(long, value_name = "N")]
    len: Option<usize>,
    /// Run the lock kernel over every element, not only the first 100000 (about 1 µs per element
    /// above the threshold on a GPU: seconds for 10⁷).
    #[arg(long)]
    lock_all: bool,
}

#[derive(Args)]
pub struct BenchArgs {
    /// Sizes in floats, comma-separated [default: 10000000,1000000000].
    #[arg(long, value_name = "N,...", value_delimiter = ',')]
    len: Vec<usize>,
    /// Timed launches per kernel and size.
    #[arg(long, default_value_t = 20)]
    trials: u32,
    /// Blocks per SM [default: as many as fit, from the occupancy calculator].
    #[arg(long, value_name = "B")]
    blocks_per_sm: Option<u32>,
    /// Bytes of the device-to-device copy measured as the roofline.
    #[arg(long, default_value_t = copy::DEFAULT_BYTES)]
    copy_bytes: usize,
}

pub fn command(target: &Target, args: &CountAboveArgs, json: bool) -> Result<()> {
    let (data, input) = match &args.input {
        Some(path) => (read_f32_file(path)?, path.display().to_string()),
        None => {
            let default = if target.is_sim() {
                SIM_DEFAULT_LEN
            } else {
                DEFAULT_LEN
            };
            let len = args.len.unwrap_or(default);
            let what = format!("{len} pseudo-random floats in [0, 1) (seed {DEFAULT_SEED:#x})");
            (default_input(len), what)
        }
    };
    let opts = CountOptions {
        threshold: args.threshold,
        lock_elements: if args.lock_all {
            usize::MAX
        } else {
            LOCK_PREFIX
        },
    };
    let r = run(target, &data, &input, &opts, progress(!json, "count-above"))?;
    if json {
        return print_json(&r);
    }
    print_report(&r);
    Ok(())
}

fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("—".into(), |v| format!("{v:.digits$}"))
}

pub fn print_report(r: &CountAboveReport) {
    println!("count-above on the {}", r.target);
    println!("  input: {} ({} elements)", r.input, r.len);
    println!(
        "  elements > {}: {} (CPU; NaN never counts)",
        r.threshold, r.expected
    );
    println!();
    println!(
        "  {:<18} {:>11} {:>11} {:>12} {:>9} {:>8}  how",
        "kernel", "elements", "count", "grid", "ms", "GB/s"
    );
    for k in &r.runs {
        println!(
            "  {:<18} {:>11} {:>11} {:>12} {:>9} {:>8}  {}",
            k.name,
            k.elements,
            k.count,
            format!("{}×{}", k.blocks, k.threads_per_block),
            fmt_opt(k.ms, 4),
            fmt_opt(k.gb_per_s, 0),
            k.what
        );
    }
    println!();
    println!("  Every count equals the CPU's over the same elements.");
    if r.lock_elements < r.len {
        println!(
            "  The lock kernel ran on the first {} elements only (--lock-all for all {}).",
            r.lock_elements, r.len
        );
    }
    if r.runs.iter().all(|k| k.ms.is_none()) {
        println!("  No timings: the simulator's speed says nothing about a GPU's.");
    } else {
        println!(
            "  ms: one event-timed launch after a warm-up (the lock kernel: its only launch)."
        );
    }
}

pub fn bench_command(target: &Target, args: &BenchArgs, json: bool) -> Result<()> {
    let defaults = bench::default_options();
    let opts = gridsync::bench::SizedBenchOptions {
        lens: if args.len.is_empty() {
            defaults.lens
        } else {
            args.len.clone()
        },
        trials: args.trials,
        blocks_per_sm: args.blocks_per_sm,
        copy_bytes: args.copy_bytes,
    };
    let b = bench::run(target, &opts, progress(!json, "bench count-above"))?;
    if json {
        return print_json(&b);
    }
    print_bench(&b);
    Ok(())
}

pub fn print_bench(b: &CountAboveBench) {
    println!(
        "count-above benchmark on the {} (threshold {}, median of {} trials)",
        b.device, b.threshold, b.copy.ms.samples
    );
    print_copy_roofline(&b.copy);
    for s in &b.sizes {
        println!();
        println!("  n = {} ({} bytes read per count)", s.len, s.bytes_read);
        if let Some(why) = &s.skipped {
            println!("    skipped: {why}");
            continue;
        }
        println!(
            "    {:<18} {:>12} {:>10} {:>10} {:>10} {:>8} {:>8}",
            "kernel", "grid", "median ms", "min ms", "max ms", "GB/s", "of copy"
        );
        for k in &s.kernels {
            println!(
                "    {:<18} {:>12} {:>10.4} {:>10.4} {:>10.4} {:>8.0} {:>7.1}%",
                k.name,
                format!("{}×{}", k.blocks, k.threads_per_block),
                k.ms.median,
                k.ms.min,
                k.ms.max,
                k.gb_per_s,
                100.0 * k.fraction_of_copy
            );
        }
    }
    println!();
    println!("  {}", b.definition);
    println!(
        "  The lock kernel is not benchmarked (~1 µs per element above); `count-above` times it."
    );
}
