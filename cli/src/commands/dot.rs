//! `gridsync dot` and `gridsync bench dot`.

use super::output::{
    Column, DEFAULT_SEED, SizedBenchArgs, TableLayout, demo_size, print_json_or, print_sized_bench,
    print_timing_note, progress, sized_bench_command,
};
use super::table::{Table, launch_cells, sci};
use clap::Args;
use gridsync::dot::DEMO_FOOTPRINT;
use gridsync::dot::{DEFAULT_LEN, DotReport, SIM_DEFAULT_LEN, random_data, run, source_data};
use gridsync::{Result, Target};
use gridsync_cli::bench::dot::{self as bench, DotBench};

#[derive(Args)]
pub struct DotArgs {
    /// Elements per array [default: 10000000 on a GPU, 10000 on the simulator].
    #[arg(long, value_name = "N")]
    len: Option<usize>,
    /// Fresh random data in [-1, 1) instead of the source's a = 1, b = 1/N.
    #[arg(long)]
    random: bool,
    /// The seed of the random data (implies --random), to replay a run [default with
    /// --random: 1].
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
}

/// `bench dot`: a sized benchmark's flags, worded for two arrays and `dot_vec4`'s grid (the
/// source's kernels keep the source's).
#[derive(Args)]
#[command(mut_arg("len", |a| a.help(
    "Elements per array, comma-separated [default: 10000000,1000000000]"
)))]
#[command(mut_arg("blocks_per_sm", |a| a.help(
    "Blocks per SM of dot_vec4 [default: as many as fit, from the occupancy calculator]"
)))]
pub struct BenchArgs {
    #[command(flatten)]
    sized: SizedBenchArgs,
}

/// The demo's length where `--len` is not given: on the simulator, on a GPU.
const DEMO_LENS: (usize, usize) = (SIM_DEFAULT_LEN, DEFAULT_LEN);

pub fn command(target: &Target, args: &DotArgs, json: bool) -> Result<()> {
    let n = demo_size(target, "--len", args.len, DEMO_LENS, DEMO_FOOTPRINT)?;
    let seed = args.seed.or(args.random.then_some(DEFAULT_SEED));
    let ((a, b), data) = match seed {
        Some(seed) => (
            random_data(n, seed),
            format!("random in [-1, 1), --seed {seed}"),
        ),
        None => (source_data(n), "the source's: a = 1, b = 1/N".into()),
    };
    let r = run(target, &a, &b, &data, progress(!json, "dot"))?;
    print_json_or(json, &r, print_report)
}

pub fn print_report(r: &DotReport) {
    println!("dot on the {}: N = {}, data {}", r.target, r.len, r.data);
    println!(
        "  CPU (float64): {:.10}   (Σ|a·b| = {:.6e})",
        r.cpu.dot, r.cpu.sum_abs
    );
    println!();
    let t = Table::new(
        "  {kernel:<12} {result:>18.10} {rel. error:>10} {grid:>10} {ms:>9} {GB/s:>8}  {how}",
    );
    t.header();
    for k in &r.runs {
        let [grid, ms, gb] = launch_cells(&k.launch);
        t.row(&[
            &k.name,
            &k.result,
            &sci(k.rel_error, 2),
            &grid,
            &ms,
            &gb,
            &k.what,
        ]);
    }
    println!();
    println!(
        "  The source's dot_mutex reduced with s_block[tid + 1]; here every kernel uses \
         s_block[tid + i]."
    );
    print_timing_note(
        r.runs.iter().any(|k| k.launch.ms.is_some()),
        "one event-timed launch after a warm-up; dot_partial without the host's sum.",
    );
}

pub fn bench_command(target: &Target, args: &BenchArgs, json: bool) -> Result<()> {
    let sizes = (&args.sized, &bench::DEFAULT_LENS[..]);
    let run = |opts: &_, show: &mut dyn FnMut(u32, u32)| bench::run(target, opts, show);
    sized_bench_command(json, "bench dot", sizes, run, print_bench)
}

/// The dot kernels' tables: the shared columns, then the error against the CPU.
const BENCH_TABLE: TableLayout = TableLayout {
    kernel: 12,
    grid: 10,
    extra: &[Column {
        header: "rel. error",
        width: 10,
    }],
};

pub fn print_bench(b: &DotBench) {
    let title = format!(
        "dot benchmark on the {} (median of {} trials)",
        b.device, b.copy.ms.samples
    );
    print_sized_bench(&title, b, "dot", &BENCH_TABLE, |k| {
        (&k.timing, vec![format!("{:.2e}", k.rel_error)])
    });
    println!("  Reference (H200): cuBLAS via torch.dot, 10⁷: 0.027 ms.");
}
