//! `gridsync count-above` and `gridsync bench count-above`.

use super::output::{
    SizedBenchArgs, TableLayout, demo_size, print_json_or, print_sized_bench, print_timing_note,
    progress, sized_bench_command,
};
use super::table::{Table, launch_cells};
use clap::Args;
use gridsync::count_above::DEMO_FOOTPRINT;
use gridsync::count_above::{
    CountAboveReport, CountOptions, DEFAULT_LEN, DEFAULT_SEED, DEFAULT_THRESHOLD, LOCK_PREFIX,
    SIM_DEFAULT_LEN, default_input, run,
};
use gridsync::inputs::read_f32_file;
use gridsync::runtime::memory;
use gridsync::{Result, Target};
use gridsync_cli::bench::count_above::{self as bench, CountAboveBench};
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

/// `bench count-above`: a sized benchmark's flags, its sizes in floats.
#[derive(Args)]
#[command(mut_arg("len", |a| a.help(
    "Sizes in floats, comma-separated [default: 10000000,1000000000]"
)))]
pub struct BenchArgs {
    #[command(flatten)]
    sized: SizedBenchArgs,
}

/// The demo's length where `--len` is not given: on the simulator, on a GPU.
const DEMO_LENS: (usize, usize) = (SIM_DEFAULT_LEN, DEFAULT_LEN);

pub fn command(target: &Target, args: &CountAboveArgs, json: bool) -> Result<()> {
    let (data, input) = match &args.input {
        Some(path) => (read_f32_file(path)?, path.display().to_string()),
        None => {
            let len = demo_size(target, "--len", args.len, DEMO_LENS, DEMO_FOOTPRINT)?;
            let what = format!("{len} pseudo-random floats in [0, 1) (seed {DEFAULT_SEED:#x})");
            (default_input(len), what)
        }
    };
    if args.input.is_some() {
        memory::check_elements(target, "--input", data.len(), DEMO_FOOTPRINT)?;
    }
    let opts = CountOptions {
        threshold: args.threshold,
        lock_elements: if args.lock_all {
            usize::MAX
        } else {
            LOCK_PREFIX
        },
    };
    let r = run(target, &data, &input, &opts, progress(!json, "count-above"))?;
    print_json_or(json, &r, print_report)
}

pub fn print_report(r: &CountAboveReport) {
    println!("count-above on the {}", r.target);
    println!("  input: {} ({} elements)", r.input, r.len);
    println!(
        "  elements > {}: {} (CPU; NaN never counts)",
        r.threshold, r.expected
    );
    println!();
    let t =
        Table::new("  {kernel:<18} {elements:>11} {count:>11} {grid:>12} {ms:>9} {GB/s:>8}  {how}");
    t.header();
    for k in &r.runs {
        let [grid, ms, gb] = launch_cells(&k.launch);
        t.row(&[&k.name, &k.elements, &k.count, &grid, &ms, &gb, &k.what]);
    }
    println!();
    println!("  Every count equals the CPU's over the same elements.");
    if r.lock_elements < r.len {
        println!(
            "  The lock kernel ran on the first {} elements only (--lock-all for all {}).",
            r.lock_elements, r.len
        );
    }
    print_timing_note(
        r.runs.iter().any(|k| k.launch.ms.is_some()),
        "one event-timed launch after a warm-up (the lock kernel: its only launch).",
    );
}

pub fn bench_command(target: &Target, args: &BenchArgs, json: bool) -> Result<()> {
    let sizes = (&args.sized, &bench::DEFAULT_LENS[..]);
    let run = |opts: &_, show: &mut dyn FnMut(u32, u32)| bench::run(target, opts, show);
    sized_bench_command(json, "bench count-above", sizes, run, print_bench)
}

/// The counting kernels' tables: the shared columns only.
const BENCH_TABLE: TableLayout = TableLayout {
    kernel: 18,
    grid: 12,
    extra: &[],
};

pub fn print_bench(b: &CountAboveBench) {
    let title = format!(
        "count-above benchmark on the {} (threshold {}, median of {} trials)",
        b.bench.device, b.threshold, b.bench.copy.ms.samples
    );
    print_sized_bench(&title, &b.bench, "count", &BENCH_TABLE, |k| {
        (&k.timing, Vec::new())
    });
    println!(
        "  The lock kernel is not benchmarked (~1 µs per element above); `count-above` times it."
    );
}
