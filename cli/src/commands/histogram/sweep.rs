//! `gridsync histogram --sweep`: the source's block-count sweep, its table, its explanation
//! and its plot.

use super::HistogramArgs;
use crate::commands::output::{print_json_or, progress};
use crate::commands::table::{Table, fmt_opt};
use gridsync::histogram::Bins;
use gridsync::{Error, Result, Target};
use gridsync_cli::demos::histogram_sweep::{
    SweepOptions, SweepReport, source_block_counts, sweep, sweep_chart,
};
use gridsync_cli::plot::{two_axis_chart, write_svg};
use std::path::Path;

pub fn sweep_command(
    target: &Target,
    data: &[u8],
    input: &str,
    bins: Bins,
    args: &HistogramArgs,
    json: bool,
) -> Result<()> {
    if target.is_sim() {
        return Err(Error::Unsupported(
            "the sweep times grids of 1280 to 127 360 threads; the simulator runs at most 4096 \
             and times nothing — run it on a GPU"
                .into(),
        ));
    }
    if args.sweep_step == 0 {
        return Err(Error::InvalidInput("--sweep-step must be positive".into()));
    }
    let opts = SweepOptions {
        blocks: source_block_counts(args.sweep_step),
        trials: args.sweep_trials,
        bins,
    };
    let r = sweep(target, data, input, &opts, progress(!json, "sweep"))?;
    if let Some(path) = &args.plot {
        write_svg(path, &two_axis_chart(&sweep_chart(&r)))?;
    }
    print_json_or(json, &r, |r| print_sweep(r, args.plot.as_deref()))
}

pub fn print_sweep(r: &SweepReport, plot: Option<&Path>) {
    println!(
        "histogram sweep on the {}: {} ({} bytes), {} bins, {} threads per block, median of {} launches per point",
        r.target,
        r.input,
        r.len,
        r.bins.count(),
        r.threads_per_block,
        r.trials
    );
    println!();
    let t = Table::new(
        "  {blocks:>7} {global ms:>11} {shared ms:>11} {no-flush ms:>14} {flush atomics:>14}",
    );
    t.header();
    // Every point is in --json; the table shows about 20 of them, the best ones and the last.
    let every = r.points.len().div_ceil(20).max(1);
    let best: Vec<u32> = [r.best_global, r.best_shared]
        .iter()
        .flatten()
        .map(|b| b.blocks)
        .collect();
    for (k, p) in r.points.iter().enumerate() {
        if k % every == 0 || k + 1 == r.points.len() || best.contains(&p.blocks) {
            let ms = [p.global_ms, p.shared_ms, p.shared_rows_ms].map(|ms| fmt_opt(ms, 4));
            t.row(&[&p.blocks, &ms[0], &ms[1], &ms[2], &p.flush_atomics]);
        }
    }
    println!();
    if let (Some(g), Some(s)) = (r.best_global, r.best_shared) {
        println!(
            "  best: histogram_global {:.4} ms at {} blocks; histogram_shared {:.4} ms at {} blocks ({:.1}× faster)",
            g.ms,
            g.blocks,
            s.ms,
            s.blocks,
            g.ms / s.ms
        );
    }
    if let Some(c) = &r.contention {
        println!();
        println!("  Why the shared kernel slows down with more blocks (measured, not assumed):");
        if c.to == c.from || c.shared_growth_ms <= 0.0 {
            println!(
                "    here it did not: its best point is {} blocks, the largest swept.",
                c.from
            );
        } else {
            println!(
                "    from {} to {} blocks histogram_shared went from {:.4} to {:.4} ms ({:+.4} ms, {:.2}×).",
                c.from,
                c.to,
                c.shared_ms.0,
                c.shared_ms.1,
                c.shared_growth_ms,
                c.shared_ms.1 / c.shared_ms.0
            );
            println!(
                "    Its final step — one device atomic per non-zero bin per block, all on the same {} addresses — grew from {} to {} atomics.",
                r.bins.count(),
                c.flush_atomics.0,
                c.flush_atomics.1
            );
            println!(
                "    The same kernel with those atomics replaced by plain stores to a row per block went from {:.4} to {:.4} ms ({:+.4} ms).",
                c.rows_ms.0, c.rows_ms.1, c.rows_growth_ms
            );
            let share = (c.shared_growth_ms - c.rows_growth_ms) / c.shared_growth_ms;
            println!(
                "    So at {} blocks the atomics cost {:.4} ms and explain {:.0}% of the slow-down; the rest, which the store version shows too, is what more blocks cost without contention (launching them, zeroing and reading their bins).",
                c.to,
                c.flush_ms,
                100.0 * share
            );
            println!(
                "    That is {:.2} ns per flush atomic, or {:.2} ns per block: the bins every block saw (the space, `e`) take one atomic per block on one address, where they queue.",
                c.ns_per_flush_atomic, c.ns_per_block
            );
        }
    }
    if let Some(p) = plot {
        println!();
        println!(
            "  Time against blocks plotted to {} (dashed lines: each kernel's best).",
            p.display()
        );
    }
}
