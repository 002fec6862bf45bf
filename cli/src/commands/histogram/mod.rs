//! `gridsync histogram` (the demo, `--write-text`; `--sweep` in [`sweep`]) and
//! `gridsync bench histogram`.

use super::output::{
    Repeats, TableLayout, demo_size, print_copy_roofline, print_json, print_json_or,
    print_kernel_table, progress,
};
use super::table::{Table, launch_cells};
use clap::Args;
use gridsync::histogram::DEMO_FOOTPRINT;
use gridsync::histogram::{Bins, SIM_DEFAULT_TEXT_BYTES};
use gridsync::inputs::text::{DEFAULT_TEXT_BYTES, DEFAULT_TEXT_SEED, english_text};
use gridsync::runtime::copy;
use gridsync::runtime::memory;
use gridsync::{Error, Result, Target};
use gridsync_cli::bench::histogram::{self as bench, HistogramBench, HistogramBenchOptions};
use gridsync_cli::demos::histogram::{DEMO_TRIALS, HistogramOptions, HistogramReport, run};
use gridsync_cli::plot::{bar_charts, check_svg_path, write_svg};

mod sweep;
pub mod wide;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct HistogramArgs {
    /// Count the bytes of FILE instead of generated English-like text.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["bytes", "seed"])]
    input: Option<PathBuf>,
    /// Bytes of generated text [default: 5638519, the source's Shakespeare, on a GPU; 100000 on
    /// the simulator].
    #[arg(long, value_name = "N")]
    bytes: Option<usize>,
    /// Seed of the generated text.
    #[arg(long, value_name = "S", default_value_t = DEFAULT_TEXT_SEED)]
    seed: u64,
    /// 128 (ASCII, bytes >= 128 skipped, as the source), 256, or 65536 (16-bit values: the
    /// input is little-endian u16, or generated with --len and --tokens).
    #[arg(long, value_name = "128|256|65536", default_value_t = 128)]
    bins: u32,
    /// With --bins 65536: values to generate [default: 10⁸ on a GPU, 10⁵ on the simulator].
    #[arg(
        long = "len",
        visible_alias = "values",
        value_name = "N",
        conflicts_with = "input"
    )]
    values: Option<usize>,
    /// With --bins 65536: token-like ids (Zipf's law over 50 257 ids) instead of uniform values.
    #[arg(long, conflicts_with = "input")]
    tokens: bool,
    /// With --bins 65536: write the values (little-endian u16) to FILE and stop: the input of
    /// scripts/reference_histogram_u16.cu.
    #[arg(long, value_name = "FILE")]
    write_values: Option<PathBuf>,
    /// Blocks for every kernel [default: 32 × SMs for the source's kernels, one full wave for
    /// the others].
    #[arg(long, value_name = "N", conflicts_with = "sweep")]
    blocks: Option<u32>,
    /// Write every bin's count to FILE: NumPy's .npy (u64) where the name ends in .npy, else
    /// CSV (`bin,count`, then a line per bin).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["sweep", "write_text", "write_values"])]
    output: Option<PathBuf>,
    /// Write the letter bar charts (with --sweep: time against blocks) to FILE.svg.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// The source's block-count sweep of the global and shared kernels: blocks = 32 × i for i
    /// in range(10, 1000, 5), 128 threads per block (GPU only).
    #[arg(long)]
    sweep: bool,
    /// Take every STEP-th i of the sweep's range(10, 1000) (the source's step is 5).
    #[arg(long, value_name = "STEP", default_value_t = 5)]
    sweep_step: u32,
    /// Timed launches per kernel and block count in the sweep (the source: 50).
    #[arg(
        long = "sweep-repeats",
        visible_alias = "sweep-trials",
        value_name = "N",
        default_value_t = 20
    )]
    sweep_trials: u32,
    /// Write the generated text (--bytes, --seed) to FILE and stop: the input of
    /// scripts/reference_histogram.py.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["input", "sweep", "plot"])]
    write_text: Option<PathBuf>,
}

#[derive(Args)]
pub struct BenchArgs {
    /// 128 (ASCII, as the targets) or 256.
    #[arg(long, value_name = "128|256", default_value_t = 128)]
    bins: u32,
    #[command(flatten)]
    repeats: Repeats,
    /// Bytes of the large English-like and random inputs.
    #[arg(long = "bytes", visible_alias = "large-bytes", value_name = "N", default_value_t = bench::LARGE_BYTES)]
    large_bytes: usize,
    /// Bytes of the device-to-device copy measured as the roofline.
    #[arg(long, default_value_t = copy::DEFAULT_BYTES)]
    copy_bytes: usize,
}

/// `gridsync histogram`: opens the target itself, since `--write-text` needs none.
pub fn command(device: u32, simulate: bool, args: &HistogramArgs, json: bool) -> Result<()> {
    if let Some(path) = &args.output {
        // Before the input is read and the kernels run, not after.
        gridsync::histogram::counts_file::check_output(path)?;
    }
    if args.bins == gridsync::histogram::wide::BINS as u32 {
        let target = Target::open(device, simulate)?;
        return wide::command(&target, args, json);
    }
    if args.values.is_some() || args.tokens || args.write_values.is_some() {
        return Err(Error::InvalidInput(
            "--len (--values), --tokens and --write-values are for --bins 65536".into(),
        ));
    }
    let bins = Bins::from_count(args.bins)?;
    if let Some(path) = &args.write_text {
        let n = args.bytes.unwrap_or(DEFAULT_TEXT_BYTES);
        memory::check_host(&format!("--bytes {n}"), n as u64)?;
        let text = english_text(n, args.seed);
        std::fs::write(path, &text).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        if json {
            return print_json(&serde_json::json!({
                "path": path, "bytes": n, "seed": args.seed
            }));
        }
        println!(
            "wrote {n} bytes of English-like text (seed {:#x}) to {}",
            args.seed,
            path.display()
        );
        return Ok(());
    }
    if let Some(path) = &args.plot {
        // Before the input is read and the histogram or sweep runs, not after.
        check_svg_path(path)?;
    }
    let target = Target::open(device, simulate)?;
    let (data, input) = match &args.input {
        Some(path) => {
            memory::check_file(path, 1)?;
            let data = std::fs::read(path).map_err(|source| Error::Io {
                path: path.clone(),
                source,
            })?;
            (data, path.display().to_string())
        }
        None => {
            let n = demo_size(
                &target,
                "--bytes",
                args.bytes,
                (SIM_DEFAULT_TEXT_BYTES, DEFAULT_TEXT_BYTES),
                DEMO_FOOTPRINT,
            )?;
            let what = format!("English-like text (seed {:#x})", args.seed);
            (english_text(n, args.seed), what)
        }
    };
    // Checked again with the input's length: a file's bytes now need room on the device too.
    memory::check_elements(&target, "--input", data.len(), DEMO_FOOTPRINT)?;
    if args.sweep {
        return sweep::sweep_command(&target, &data, &input, bins, args, json);
    }
    let opts = HistogramOptions {
        bins,
        blocks: args.blocks,
    };
    let r = run(&target, &data, &input, &opts, progress(!json, "histogram"))?;
    if let Some(path) = &args.plot {
        write_svg(path, &bar_charts(&r.letters.panels(), "Count"))?;
    }
    if let Some(path) = &args.output {
        gridsync::histogram::counts_file::write_counts(path, &r.histogram)?;
    }
    print_json_or(json, &r, |r| print_report(r, args.plot.as_deref()))
}

pub fn print_report(r: &HistogramReport, plot: Option<&Path>) {
    println!("histogram on the {}", r.target);
    println!(
        "  input: {} ({} bytes), {} bins",
        r.input,
        r.len,
        r.bins.count()
    );
    if r.skipped > 0 {
        println!(
            "  {} bytes have no bin (>= {}): skipped, as the source does",
            r.skipped,
            r.bins.count()
        );
    }
    println!();
    println!("  letter  count        letter  count");
    for (lo, up) in r.letters.lowercase.iter().zip(&r.letters.uppercase) {
        println!("  {:<7} {:<12} {:<7} {}", lo.0, lo.1, up.0, up.1);
    }
    println!();
    let t = Table::new("  {kernel:<16} {grid:>12} {ms:>10} {GB/s:>8}  {how}");
    t.header();
    for k in &r.runs {
        let [grid, ms, gb] = launch_cells(&k.launch);
        t.row(&[&k.name, &grid, &ms, &gb, &k.what]);
    }
    println!();
    println!("  Every kernel's histogram equals the CPU's, bin for bin.");
    match r.shared_speedup {
        Some(x) => println!(
            "  The shared-memory kernel (4.4) ran {x:.1}× as fast as the global-atomic one (4.3); the source found about 3×."
        ),
        None => println!("  No timings: the simulator's speed says nothing about a GPU's."),
    }
    if r.runs.iter().any(|k| k.launch.ms.is_some()) {
        println!("  ms: median of {DEMO_TRIALS} event-timed launches after a checked warm-up.");
    }
    if let Some(p) = plot {
        println!("  Letter counts plotted to {}", p.display());
    }
}

pub fn bench_command(target: &Target, args: &BenchArgs, json: bool) -> Result<()> {
    let opts = HistogramBenchOptions {
        bins: Bins::from_count(args.bins)?,
        trials: args.repeats.trials,
        large_bytes: args.large_bytes,
        copy_bytes: args.copy_bytes,
    };
    let b = bench::run(target, &opts, progress(!json, "bench histogram"))?;
    print_json_or(json, &b, print_bench)
}

/// The histogram kernels' tables: the shared columns only.
const BENCH_TABLE: TableLayout = TableLayout {
    kernel: 16,
    grid: 12,
    extra: &[],
};

pub fn print_bench(b: &HistogramBench) {
    println!(
        "histogram benchmark on the {} ({} bins, median of {} trials)",
        b.device,
        b.bins.count(),
        b.copy.ms.samples
    );
    print_copy_roofline(&b.copy);
    for i in &b.inputs {
        let heading = format!(
            "{} bytes of {} (the library picks {})",
            i.bytes, i.what, i.library_kernel
        );
        let rows = i.kernels.iter().map(|k| (&k.timing, Vec::new()));
        print_kernel_table(&heading, i.skipped.as_deref(), &BENCH_TABLE, rows);
    }
    println!();
    println!("  {}", b.definition);
    println!("  Every trial's histogram equals the CPU's. The 5.6 MB text fits in L2.");
}
