//! `gridsync reduce` and `gridsync bench reduce`.

use super::output::{
    Column, DEFAULT_SEED, SizedBenchArgs, TableLayout, demo_size, parse_option, print_json_or,
    print_sized_bench, print_timing_note, progress, sized_bench_command,
};
use super::table::{Table, fmt_opt, launch_cells, sci};
use clap::Args;
use gridsync::inputs::read_f32_file;
use gridsync::reduce::DEMO_FOOTPRINT;
use gridsync::reduce::{
    Accumulate, BOOK_VALUE, DEFAULT_LEN, ReduceOptions, ReduceReport, SIM_DEFAULT_LEN, Step, Value,
    book_input, random_input, run,
};
use gridsync::runtime::memory;
use gridsync::{Result, Target};
use gridsync_cli::bench::reduce::{self as bench, ReduceBench};
use std::path::PathBuf;

#[derive(Args)]
pub struct ReduceArgs {
    /// Elements of the generated input [default: 100000000 (the CUDA book's N) on a GPU, 10000
    /// on the simulator].
    #[arg(long, value_name = "N", conflicts_with = "input")]
    len: Option<usize>,
    /// Read the array from FILE: raw little-endian f32 if the name ends in .f32 or .bin,
    /// otherwise numbers separated by spaces or newlines.
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// Fresh random data uniform in [0, 1) instead of the book's 1.23 everywhere: the order of
    /// additions now changes the result.
    #[arg(long, conflicts_with = "input")]
    random: bool,
    /// Random data uniform in [-1, 1) (implies --random): sums that cancel.
    #[arg(long, conflicts_with = "input")]
    signed: bool,
    /// The seed of the random data (implies --random), to replay a run [default with
    /// --random: 1].
    #[arg(long, value_name = "S", conflicts_with = "input")]
    seed: Option<u64>,
    /// How the single-pass kernels (d) and (e) accumulate: f32, f64 or kahan.
    #[arg(long, value_name = "ACC", default_value = "f32", value_parser = parse_option::<Accumulate>)]
    accumulate: Accumulate,
    /// Runs of each kernel whose results are compared bit for bit (and timed on a GPU).
    #[arg(long, value_name = "R", default_value_t = 3)]
    repeats: u32,
}

/// `bench reduce`: a sized benchmark's flags, worded for the reduction kernels.
#[derive(Args)]
#[command(mut_arg("len", |a| a.help(
    "Sizes in floats, comma-separated [default: 100000000,1000000000]"
)))]
#[command(mut_arg("blocks_per_sm", |a| a.help(
    "Blocks per SM of the grid-stride kernels [default: as many as fit, from the occupancy \
     calculator]"
)))]
pub struct BenchArgs {
    #[command(flatten)]
    sized: SizedBenchArgs,
}

/// The demo's length where `--len` is not given: on the simulator, on a GPU.
const DEMO_LENS: (usize, usize) = (SIM_DEFAULT_LEN, DEFAULT_LEN);

pub fn command(target: &Target, args: &ReduceArgs, json: bool) -> Result<()> {
    let (data, input) = match &args.input {
        Some(path) => (read_f32_file(path)?, path.display().to_string()),
        None => {
            let n = demo_size(target, "--len", args.len, DEMO_LENS, DEMO_FOOTPRINT)?;
            let random = args.random || args.signed || args.seed.is_some();
            match args.seed.or(random.then_some(DEFAULT_SEED)) {
                Some(seed) => {
                    let range = if args.signed { "[-1, 1)" } else { "[0, 1)" };
                    let what = format!("{n} random floats in {range} (--seed {seed})");
                    (random_input(n, seed, args.signed), what)
                }
                None => (
                    book_input(n),
                    format!("{n} × {BOOK_VALUE} (the CUDA book's input)"),
                ),
            }
        }
    };
    if args.input.is_some() {
        memory::check_elements(target, "--input", data.len(), DEMO_FOOTPRINT)?;
    }
    let opts = ReduceOptions {
        accumulate: args.accumulate,
        repeats: args.repeats,
        types: true,
    };
    let r = run(target, &data, &input, &opts, progress(!json, "reduce"))?;
    print_json_or(json, &r, print_report)
}

fn fmt_value(v: Value) -> String {
    match v {
        Value::Float(x) => format!("{x}"),
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => u.to_string(),
    }
}

/// The distance from `|x|` to the next larger `f32`: the rounding grid of an `f32` running total
/// that has reached `x`.
fn f32_spacing(x: f64) -> f64 {
    let v = x.abs() as f32;
    (f32::from_bits(v.to_bits() + 1) - v) as f64
}

fn fmt_spacing(s: f64) -> String {
    if s >= 1.0 {
        format!("{s}")
    } else {
        format!("{s:.3e}")
    }
}

pub fn print_report(r: &ReduceReport) {
    println!("reduce on the {}: {}", r.target, r.input);
    println!(
        "  CPU sum (f64, compensated): {}   Σ|x| = {:.6e}",
        r.expected, r.abs_sum
    );
    println!(
        "  (d) and (e) accumulate in {}; {} run(s) per kernel",
        r.accumulate.label(),
        r.repeats
    );
    println!();
    let t = Table::new(
        "  {kernel:<34} {result:>20} {rel. err:>10} {same bits:>10} {grid:>11} {ms:>9} {GB/s:>7}  {how}",
    );
    t.header();
    for k in &r.runs {
        let same = if k.same_bits {
            "yes".to_string()
        } else {
            format!("no ({})", k.distinct_results)
        };
        let [grid, ms, gb] = launch_cells(&k.launch);
        let err = sci(k.rel_error, 2);
        t.row(&[&k.name, &k.value, &err, &same, &grid, &ms, &gb, &k.what]);
    }
    if !r.types.is_empty() {
        println!();
        let t = Table::new(
            "  {kernel:<34} {result:>22} {CPU:>22} {rel. err:>10} {ms:>9} {GB/s:>7}  {what}",
        );
        t.header();
        for k in &r.types {
            let (value, expected) = (fmt_value(k.value), fmt_value(k.expected));
            let (err, ms, gb) = (
                sci(k.rel_error, 2),
                fmt_opt(k.ms, 4),
                fmt_opt(k.gb_per_s, 0),
            );
            t.row(&[&k.name, &value, &expected, &err, &ms, &gb, &k.what]);
        }
        println!("  Integer sums, min and max equal the CPU's exactly.");
    }
    println!();
    explain(r);
}

/// Prints `text` as a paragraph indented by two spaces, wrapped at 100 columns.
fn paragraph(text: &str) {
    let mut line = String::from(" ");
    for word in text.split_whitespace() {
        if line.chars().count() + 1 + word.chars().count() > 100 {
            println!("{line}");
            line = String::from(" ");
        }
        line.push(' ');
        line.push_str(word);
    }
    println!("{line}");
}

fn explain(r: &ReduceReport) {
    if let Some(book) = r.runs.iter().find(|k| k.step == Step::Atomic) {
        paragraph(&format!(
            "Why the book's kernel is off: {} blocks each atomicAdd their sum into one f32. Once \
             the total nears {:.4e}, neighbouring f32 values are {} apart, and every addition \
             rounds to that grid — {} roundings, mostly the same way when the block sums are \
             alike — in whatever order the blocks finish, so the last bits can also change from \
             run to run (rel. error here {:.1e}).",
            book.launch.blocks,
            r.expected,
            fmt_spacing(f32_spacing(r.expected)),
            book.launch.blocks,
            book.rel_error
        ));
    }
    paragraph(
        "Why the last-block kernels are deterministic: no float atomics. Each block writes its \
         partial, fences (threadfence), and takes a ticket with atomicInc; the block that draws \
         the last ticket adds all partials in block order. The order of every addition depends \
         on the launch shape alone, never on timing: the same input gives the same bits, run \
         after run (a different GPU, with another grid, may round differently).",
    );
    if r.accumulate == Accumulate::F32 {
        paragraph(
            "--accumulate f64 or kahan brings (d) and (e) near f64 accuracy (what it costs: \
             `gridsync bench reduce`); --random or --signed shows the order of additions \
             mattering on varied data.",
        );
    }
    print_timing_note(
        r.runs.iter().any(|k| k.launch.ms.is_some()),
        "median of the event-timed runs after a warm-up; the host's part not timed.",
    );
}

pub fn bench_command(target: &Target, args: &BenchArgs, json: bool) -> Result<()> {
    let sizes = (&args.sized, &bench::DEFAULT_LENS[..]);
    let run = |opts: &_, show: &mut dyn FnMut(u32, u32)| bench::run(target, opts, show);
    sized_bench_command(json, "bench reduce", sizes, run, print_bench)
}

/// The reduction's tables: the shared columns, then the error and the distinct results.
const BENCH_TABLE: TableLayout = TableLayout {
    kernel: 34,
    grid: 13,
    extra: &[
        Column {
            header: "rel. err",
            width: 9,
        },
        Column {
            header: "results",
            width: 9,
        },
    ],
};

pub fn print_bench(b: &ReduceBench) {
    let title = format!(
        "reduce benchmark on the {} (every element {}, median of {} trials)",
        b.bench.device, b.value, b.bench.copy.ms.samples
    );
    print_sized_bench(&title, &b.bench, "sum", &BENCH_TABLE, |k| {
        let cells = vec![
            format!("{:.1e}", k.rel_error),
            k.distinct_results.to_string(),
        ];
        (&k.timing, cells)
    });
    println!(
        "  results: distinct values over the trials (1 = the same bits every time). Timed: the \
         kernel only (not the zeroing before the atomic ones, nor the host's sum after \
         partial_reduce)."
    );
}
