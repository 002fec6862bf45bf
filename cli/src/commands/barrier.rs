//! `gridsync barrier` (the article's X→P→X experiment, `--sweep` its figure 5) and
//! `gridsync bench barrier`.

use super::output::{print_json_or, print_timing_note, progress};
use super::table::Table;
use clap::Args;
use gridsync::barrier::{
    BarrierOptions, BarrierReport, DEFAULT_SEED, SOURCE_BLOCKS, SOURCE_ITERATIONS, SOURCE_LEN,
    SOURCE_THREADS, Variant, VariantRun, WrongRun, run,
};
use gridsync::{Result, Target};
use gridsync_cli::bench::barrier::{self as bench, BarrierBench};
use gridsync_cli::demos::barrier_sweep::{SweepOptions, SweepReport, sweep, sweep_chart};
use gridsync_cli::plot::{check_svg_path, write_svg};
use std::path::PathBuf;

#[derive(Args)]
pub struct BarrierArgs {
    /// Blocks of the grid (at most what fits on the device at once).
    #[arg(long, value_name = "B", default_value_t = SOURCE_BLOCKS)]
    blocks: u32,
    /// Threads per block.
    #[arg(long, value_name = "T", default_value_t = SOURCE_THREADS)]
    threads: u32,
    /// X→P→X iterations per launch.
    #[arg(long, value_name = "N", default_value_t = SOURCE_ITERATIONS)]
    iterations: u32,
    /// W: values in X and in P.
    #[arg(long, value_name = "W", default_value_t = SOURCE_LEN)]
    len: usize,
    /// The seed of X₀.
    #[arg(long, value_name = "S", default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Timed runs of each correct variant (GPU); the median is printed.
    #[arg(long, value_name = "R", default_value_t = 10)]
    repeats: u32,
    /// Time the correct variants against the number of blocks, up to the co-residency limit
    /// (the article's figure 5; GPU only).
    #[arg(long)]
    sweep: bool,
    /// With --sweep, the block counts (comma-separated) [default: powers of two, then
    /// multiples of the SM count up to the limit].
    #[arg(long, value_name = "B,...", value_delimiter = ',', requires = "sweep")]
    sweep_blocks: Vec<u32>,
    /// With --sweep, draw it as an SVG chart.
    #[arg(long, value_name = "F.svg", requires = "sweep")]
    plot: Option<PathBuf>,
}

#[derive(Args)]
pub struct BenchArgs {
    /// Barriers (empty kernels) per timed launch (graph).
    #[arg(long, default_value_t = bench::DEFAULT_ROUNDS)]
    rounds: u32,
    /// Timed trials per figure.
    #[arg(long = "repeats", value_name = "N", visible_alias = "trials", default_value_t = bench::DEFAULT_TRIALS)]
    trials: u32,
}

pub fn command(target: &Target, args: &BarrierArgs, json: bool) -> Result<()> {
    if let Some(path) = &args.plot {
        check_svg_path(path)?;
    }
    let opts = BarrierOptions {
        blocks: args.blocks,
        threads: args.threads,
        len: args.len,
        iterations: args.iterations,
        seed: args.seed,
        repeats: args.repeats,
        variants: Variant::ALL.to_vec(),
    };
    if args.sweep {
        let s = sweep(
            target,
            &SweepOptions {
                base: opts,
                blocks: args.sweep_blocks.clone(),
            },
            progress(!json, "barrier sweep"),
        )?;
        if let Some(path) = &args.plot {
            write_svg(path, &sweep_chart(&s))?;
        }
        return print_json_or(json, &s, |s| print_sweep(s, args.plot.as_ref()));
    }
    let r = run(target, &opts, progress(!json, "barrier"))?;
    print_json_or(json, &r, print_report)
}

fn fmt_us(r: &gridsync::barrier::VariantRun) -> String {
    r.us_per_iteration
        .as_ref()
        .map_or("—".into(), |s| format!("{:.2}", s.median))
}

/// Wrong runs as the article describes them: `0..32, 64..96`.
fn fmt_runs(wrong: &[gridsync::barrier::WrongRun]) -> String {
    if wrong.is_empty() {
        return "none: the CPU's bits".into();
    }
    let count: usize = wrong.iter().map(|w| w.len).sum();
    let shown: Vec<String> = wrong
        .iter()
        .take(6)
        .map(|w| format!("{}..{}", w.start, w.start + w.len))
        .collect();
    let more = wrong.len().saturating_sub(shown.len());
    let tail = if more > 0 {
        format!(" and {more} more runs")
    } else {
        String::new()
    };
    format!("{count} wrong: {}{tail}", shown.join(", "))
}

/// What a broken variant does wrong.
fn mistake(v: Variant) -> &'static str {
    match v {
        Variant::NoBarrier => {
            "nothing orders the stages: a warp can read P before other warps wrote it (wrong in \
             runs of whole warps)"
        }
        Variant::SyncThreads => {
            "sync_threads orders the threads of one block, not the grid: a block can read P \
             before another block wrote it (wrong in runs of whole blocks)"
        }
        Variant::PlainSpin => {
            "the compiler hoists the plain load out of the spin (one load before the loop): a \
             block that sees the counter non-zero gives up at once and runs ahead"
        }
        Variant::Article => {
            "right at one barrier; reused, a waiter that polls after the last block has arrived \
             at the next barrier misses the counter's moment of zero and waits until the timeout"
        }
        Variant::CountToN => {
            "a counter that never resets: right at its first barrier, it lets every block \
             through from the second on"
        }
        _ => "(a correct variant)",
    }
}

/// What this run of a broken variant showed: a timeout, wrong values (and in runs of what), or
/// nothing wrong.
fn what_happened(v: &VariantRun, threads: u32) -> String {
    if let Some(e) = &v.launch_error {
        return format!("the launch did not finish: {e}");
    }
    let shape = |runs: &[WrongRun]| {
        let threads = threads as usize;
        if runs
            .iter()
            .all(|w| w.start % threads == 0 && w.len % threads == 0)
        {
            format!("whole blocks of {threads}")
        } else if runs.iter().all(|w| w.start % 32 == 0 && w.len % 32 == 0) {
            "whole warps of 32".to_string()
        } else {
            "runs of no warp's or block's size".to_string()
        }
    };
    let count = |runs: &[WrongRun]| runs.iter().map(|w| w.len).sum::<usize>();
    match (v.wrong.is_empty(), v.first_iteration_wrong.is_empty()) {
        (true, true) => "X came out right, after one iteration and after all: the mistake did \
                         not show this time"
            .to_string(),
        (false, true) => format!(
            "{} values of X wrong after all iterations ({}), none after one",
            count(&v.wrong),
            shape(&v.wrong)
        ),
        (true, false) => format!(
            "{} values wrong after one iteration ({}), none after all (the errors washed out)",
            count(&v.first_iteration_wrong),
            shape(&v.first_iteration_wrong)
        ),
        (false, false) => format!(
            "{} values wrong after one iteration ({}), {} after all",
            count(&v.first_iteration_wrong),
            shape(&v.first_iteration_wrong),
            count(&v.wrong)
        ),
    }
}

pub fn print_report(r: &BarrierReport) {
    let o = &r.options;
    println!(
        "barrier: X→P→X, W = {}, {} iterations, {} blocks × {} threads, on the {}",
        o.len, o.iterations, o.blocks, o.threads, r.target
    );
    println!(
        "  at most {} blocks of {} threads fit on the device at once (a grid barrier's limit)",
        r.coresident_blocks, o.threads
    );
    println!(
        "  the f32 iteration on the CPU is within {:.1e} of the float64 one",
        r.cpu_rel_error_f64
    );
    println!();
    let t = Table::new("  {variant:<26} {kernel:<26} {µs/iter:>9}  {X against the CPU}");
    t.header();
    for v in &r.runs {
        t.row(&[&v.name, &v.kernel, &fmt_us(v), &fmt_runs(&v.wrong)]);
        if !v.must_be_correct {
            let first = fmt_runs(&v.first_iteration_wrong);
            t.row(&[&"", &"", &"", &format!("after 1 iteration: {first}")]);
        }
        if let Some(e) = &v.launch_error {
            println!("  {:<26} {e}", "");
        }
    }
    println!();
    println!("  The broken variants, what can go wrong and what happened in this run:");
    for v in r.runs.iter().filter(|v| !v.must_be_correct) {
        println!("  - {}: {}", v.name, mistake(v.variant));
        println!("    here: {}", what_happened(v, o.threads));
    }
    println!(
        "  A broken variant can come out right by luck of timing: run again, or on more blocks."
    );
    let timed = r.runs.iter().any(|v| v.us_per_iteration.is_some());
    print_timing_note(
        timed,
        "median over the repeats of one run's event time (all iterations) over the iterations.",
    );
}

fn print_sweep(s: &SweepReport, plot: Option<&PathBuf>) {
    println!(
        "barrier sweep on the {}: W = {}, {} threads per block, {} iterations per launch (limit {} blocks)",
        s.target, s.len, s.threads, s.iterations, s.coresident_blocks
    );
    print!("  {:>7}", "blocks");
    for v in &s.variants {
        print!(" {:>24}", v.name());
    }
    println!(" {:>10}", "gain %");
    for p in &s.points {
        print!("  {:>7}", p.blocks);
        for us in &p.us_per_iteration {
            print!(" {:>24}", us.map_or("—".into(), |u| format!("{u:.2}")));
        }
        println!(
            " {:>10}",
            p.one_launch_gain_percent()
                .map_or("—".into(), |g| format!("{g:+.1}"))
        );
    }
    println!(
        "  µs per iteration (median); gain: one launch with GridBarrier against many launches."
    );
    if let Some(path) = plot {
        println!("  chart written to {}", path.display());
    }
}

pub fn bench_command(target: &Target, args: &BenchArgs, json: bool) -> Result<()> {
    let b = bench::run(
        target,
        args.rounds,
        args.trials,
        progress(!json, "bench barrier"),
    )?;
    print_json_or(json, &b, print_bench)
}

fn print_bench(b: &BarrierBench) {
    println!(
        "grid barrier on the {}: µs per barrier or per kernel boundary, {} per launch, median of {} trials",
        b.device, b.rounds, b.trials
    );
    let t = Table::new(
        "  {grid (128 threads):<22} {blocks:>7} {GridBarrier:>12.3} {cooperative:>12.3} \
         {empty launch:>13.3} {graph kernel:>13.3}",
    );
    t.header();
    for g in &b.grids {
        let us = [
            &g.grid_barrier_us,
            &g.cooperative_us,
            &g.empty_launch_us,
            &g.graph_kernel_us,
        ];
        let [barrier, cooperative, empty, graph] = us.map(|s| s.median);
        t.row(&[&g.what, &g.blocks, &barrier, &cooperative, &empty, &graph]);
    }
    println!(
        "  GridBarrier by arrival layout (plain launch; blocks per group, 'one' = one word; sleep \
         between polls):"
    );
    for g in &b.groups {
        let layout = match (g.effective_group_blocks, g.group_blocks) {
            (Some(size), _) => size.to_string(),
            (None, None) => "one".to_string(),
            (None, Some(asked)) => format!("one (asked {asked}: too many groups)"),
        };
        println!(
            "    {:>5} blocks, groups of {:>4}, sleep {:>3} ns: {:.3} µs",
            g.blocks, layout, g.poll_sleep_ns, g.us.median
        );
    }
    println!(
        "  CUDA C++ on an H200 (scripts/reference_barrier.cu): this_grid().sync() 0.97 µs at \
         132 blocks, 4.90 µs at 2112."
    );
}
