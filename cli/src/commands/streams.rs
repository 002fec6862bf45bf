//! `gridsync streams` (the tutorial's normalize experiment) and `gridsync bench transfer`.

use super::output::{Repeats, parse_option, print_json, print_json_or, progress};
use super::table::Table;
use clap::Args;
use gridsync::normalize::{Pipeline, Schedule};
use gridsync::{Result, Target};
use gridsync_cli::bench::transfer::{self, TransferBench};
use gridsync_cli::demos::streams::{
    self as experiment, DEFAULT_ARRAYS, DEFAULT_LEN, ExperimentOptions, ExperimentReport, Run,
    SIM_DEFAULT_LEN,
};
use gridsync_cli::plot::{check_svg_path, timeline_chart, write_svg};
use std::path::PathBuf;

#[derive(Args)]
pub struct StreamsArgs {
    /// Arrays to normalize; array i is filled with i + 1.
    #[arg(long, default_value_t = DEFAULT_ARRAYS)]
    arrays: usize,
    /// Floats per array [default: 10000000 on a GPU, 3001 on the simulator].
    #[arg(long, value_name = "N")]
    len: Option<usize>,
    /// Streams of the many-stream runs [default: one per array, as the tutorial]. A one-stream
    /// run is always made too.
    #[arg(long, value_name = "K")]
    streams: Option<usize>,
    /// Host arrays in ordinary pageable memory instead of pinned: the copies become synchronous.
    #[arg(long)]
    pageable: bool,
    /// Only this pipeline: source (three kernels) or single-pass (two) [default: both].
    #[arg(long, value_parser = parse_option::<Pipeline>)]
    pipeline: Option<Pipeline>,
    /// Only this schedule for the many-stream runs: staged (one stream copies in, K compute, one
    /// copies out) or per-stream (each array entirely on its stream, as the tutorial)
    /// [default: both].
    #[arg(long, value_parser = parse_option::<Schedule>)]
    schedule: Option<Schedule>,
    /// Runs of each configuration; the median one is reported.
    #[arg(long, default_value_t = 5)]
    repeats: u32,
    /// Write the timeline (a row per array; copy in, kernels, copy out from the events) as SVG.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Print every array's events, not only the runs' summary.
    #[arg(long)]
    verbose: bool,
}

pub fn command(target: &Target, args: &StreamsArgs, json: bool) -> Result<()> {
    if let Some(p) = &args.plot {
        check_svg_path(p)?;
    }
    let len = args.len.unwrap_or(if target.is_sim() {
        SIM_DEFAULT_LEN
    } else {
        DEFAULT_LEN
    });
    let options = ExperimentOptions {
        arrays: args.arrays,
        len,
        streams: args.streams.unwrap_or(args.arrays),
        pageable: args.pageable,
        repeats: args.repeats,
        pipelines: args.pipeline.map_or(Pipeline::ALL.to_vec(), |p| vec![p]),
        schedules: args.schedule.map_or(Schedule::ALL.to_vec(), |s| vec![s]),
    };
    let report = experiment::run(target, &options, progress(!json, "streams"))?;
    let main_pipeline = *options.pipelines.last().unwrap_or(&Pipeline::SinglePass);
    let plotted = match (&args.plot, experiment::timeline(&report, main_pipeline)) {
        (Some(path), Some(t)) => {
            write_svg(path, &timeline_chart(&t))?;
            Some(path.display().to_string())
        }
        (Some(_), None) => {
            eprintln!("note: no timeline on the simulator (it has no events); no plot written");
            None
        }
        _ => None,
    };
    if json {
        return print_json(&report);
    }
    print_report(&report, args.verbose);
    if let Some(p) = plotted {
        println!(
            "  timeline of the {} runs written to {p}",
            main_pipeline.label()
        );
    }
    Ok(())
}

fn run_label(r: &Run) -> String {
    match r.options.streams {
        1 => format!("{}, 1 stream", r.options.pipeline.label()),
        k => format!(
            "{}, {k} streams, {}",
            r.options.pipeline.label(),
            r.options.schedule.label()
        ),
    }
}

pub fn print_report(r: &ExperimentReport, verbose: bool) {
    print_setup(r);
    print_runs(r);
    print_bounds(r);
    explain(r);
    if verbose {
        for run in &r.runs {
            print_events(run);
        }
    }
}

/// The arrays, the host memory, the device, and the copies and kernels timed alone.
fn print_setup(r: &ExperimentReport) {
    let o = &r.options;
    println!(
        "normalize a ← a / Σa: {} arrays × {} floats ({:.1} MB each, array i = i + 1), {} host \
         memory, on the {}",
        o.arrays,
        o.len,
        o.len as f64 * 4e-6,
        match (r.copies.is_some(), o.pageable) {
            (false, _) => "simulated",
            (true, true) => "pageable",
            (true, false) => "pinned",
        },
        r.device
    );
    if let Some(c) = &r.copies {
        println!(
            "  copies alone ({:.0} MB): H→D {:.1} GB/s, D→H {:.1} GB/s, both at once {:.1} GB/s \
             (in {:.1} beside out {:.1}; pinned); pageable H→D {:.1}, D→H {:.1} GB/s",
            o.len as f64 * 4e-6,
            c.h2d_gbps,
            c.d2h_gbps,
            c.both_gbps,
            c.both_in_gbps,
            c.both_out_gbps,
            c.h2d_pageable_gbps,
            c.d2h_pageable_gbps
        );
    }
    for k in &r.kernels {
        println!(
            "  kernels alone, {} ({}): {:.4} ms",
            k.pipeline.label(),
            k.pipeline.kernels().join(" → "),
            k.ms.median
        );
    }
    println!();
}

/// A row per run: its total, its speed-up over one stream, its overlap and its new sums.
fn print_runs(r: &ExperimentReport) {
    let t = Table::new(
        "  {run:<34} {total ms:>9.3} {min ms:>9.3} {vs 1 str:>8} {serial ms:>9.3} {overlap:>8} \
         {H→D GB/s:>8.1} {D→H GB/s:>8.1} {last:>5}  {new sums}",
    );
    t.header();
    for run in &r.runs {
        let sums = format!(
            "≈ 1 (max |Σ − 1| = {:.1e}){}",
            run.max_error,
            if run.max_error > 1e-4 {
                "  ← NOT 1"
            } else {
                ""
            }
        );
        let one = r
            .run(run.options.pipeline, 1, Schedule::PerStream)
            .and_then(|o| o.total_ms);
        let label = run_label(run);
        match (&run.report.timing, &run.total_ms) {
            (Some(timing), Some(s)) => {
                let speedup = format!("{:.2}×", one.map_or(f64::NAN, |o| o.median / s.median));
                let overlap = format!("{:.0}%", (100.0 * timing.overlap).max(0.0));
                t.row(&[
                    &label,
                    &s.median,
                    &s.min,
                    &speedup,
                    &timing.serial_ms,
                    &overlap,
                    &timing.h2d_gbps,
                    &timing.d2h_gbps,
                    &timing.last_array,
                    &sums,
                ]);
            }
            _ => t.row(&[
                &label, &"-", &"-", &"-", &"-", &"-", &"-", &"-", &"-", &sums,
            ]),
        }
    }
    if r.copies.is_some() {
        println!(
            "  serial = Σ of every array's copy in, kernels and copy out (the bars of the timeline); \
             overlap = 1 − total / serial. Per-stream bars include time spent queued behind other \
             streams' copies, so compare totals."
        );
    }
}

/// What no run can beat: the bound from the bus, and the copies alone on the runs' streams,
/// each run set beside them.
fn print_bounds(r: &ExperimentReport) {
    if let Some(b) = r.bound_ms {
        println!();
        println!(
            "  bound from the bus: {b:.3} ms (every byte in and back out at the rates above, each \
             direction at its own share while both run; the first array's copy back cannot \
             start before it is all in and summed, nor the last one's before its sum is known)"
        );
    }
    if let Some(c) = &r.streamed_copies_ms {
        let k = r.options.streams.min(r.options.arrays);
        println!(
            "  the copies alone on {k} streams: {:.3} ms (median; {:.3} at best) — every array \
             in and straight back out on the runs' streams and arrays, no kernels, once after each \
             round of the runs: no run on {k} streams can end before its copies do (beyond \
             run-to-run noise)",
            c.median, c.min
        );
        for run in r
            .runs
            .iter()
            .filter(|run| run.options.streams == k && k > 1)
        {
            if let Some(s) = &run.total_ms {
                println!(
                    "    {} on {k} streams ({}): {:.3} ms (best {:.3}), {:+.1}% beside the \
                     copies alone (best to best {:+.1}%)",
                    run.options.pipeline.label(),
                    run.options.schedule.label(),
                    s.median,
                    s.min,
                    100.0 * (s.median / c.median - 1.0),
                    100.0 * (s.min / c.min - 1.0)
                );
            }
            if let Some(p) = &run.over_copies {
                println!(
                    "      run by run, each over the copies alone of its round: {:+.1}% (median; \
                     {:+.1}% to {:+.1}%)",
                    100.0 * (p.median - 1.0),
                    100.0 * (p.min - 1.0),
                    100.0 * (p.max - 1.0)
                );
            }
        }
    }
}

/// What the numbers say, from the numbers.
fn explain(r: &ExperimentReport) {
    let o = &r.options;
    for &p in &o.pipelines {
        let one = r.run(p, 1, Schedule::PerStream);
        let k = o.streams.min(o.arrays);
        for &s in &o.schedules {
            let (Some(one), Some(many)) = (one, r.run(p, k, s)) else {
                continue;
            };
            if k == 1 {
                continue;
            }
            let (Some(a), Some(b)) = (&one.total_ms, &many.total_ms) else {
                continue;
            };
            println!(
                "  {}: {k} streams ({}) take {:.3} ms, one stream {:.3} ms: {:.2}× {}",
                p.label(),
                s.label(),
                b.median,
                a.median,
                a.median / b.median,
                if a.median > b.median * 1.05 {
                    "faster on many streams"
                } else {
                    "— streams did not help"
                }
            );
        }
    }
    if o.pageable {
        println!(
            "  pageable memory: every copy goes through a driver staging buffer, done by the CPU \
             while the call blocks, so streams cannot overlap copies (see `issue ms` with \
             --verbose). Use pinned buffers (gridsync::PinnedBuffer)."
        );
    }
}

fn print_events(run: &Run) {
    println!();
    println!("  {} — events, ms since the first begin:", run_label(run));
    let t = Table::new(
        "    {array:>5} {stream:>6} {sum before:>14.1} {begin:>9.3} {copy in:>9.3} {kernels:>9.3} \
         {copy out:>9.3} {end:>9.3} {issue ms:>9.3}",
    );
    t.header();
    for (i, a) in run.report.arrays.iter().enumerate() {
        let Some(at) = &a.timing else {
            t.row(&[&i, &"-", &a.sum]);
            continue;
        };
        let (copy_in, kernels, copy_out) = (at.copy_in(), at.kernels(), at.copy_out());
        t.row(&[
            &i,
            &at.stream,
            &a.sum,
            &at.begin_ms,
            &copy_in,
            &kernels,
            &copy_out,
            &at.end_ms,
            &at.issue_ms,
        ]);
    }
    if let Some(t) = &run.report.timing {
        for s in &t.streams {
            println!(
                "    stream {:>2}: {:.3} – {:.3} ms ({:.3} ms), arrays {:?}",
                s.stream,
                s.begin_ms,
                s.end_ms,
                s.end_ms - s.begin_ms,
                s.arrays
            );
        }
        println!(
            "    total {:.3} ms (last array {}), host wall {:.3} ms",
            t.total_ms, t.last_array, t.host_ms
        );
    }
}

#[derive(Args)]
pub struct TransferArgs {
    /// Bytes per copy, comma-separated [default: 40000000,400000000].
    #[arg(long, value_name = "B,...", value_delimiter = ',')]
    bytes: Vec<usize>,
    #[command(flatten)]
    repeats: Repeats,
}

pub fn transfer_command(target: &Target, args: &TransferArgs, json: bool) -> Result<()> {
    let sizes = if args.bytes.is_empty() {
        transfer::DEFAULT_SIZES.to_vec()
    } else {
        args.bytes.clone()
    };
    let b = transfer::run(
        target,
        &sizes,
        args.repeats.trials,
        progress(!json, "transfer"),
    )?;
    print_json_or(json, &b, print_transfer)
}

fn print_transfer(b: &TransferBench) {
    println!("host↔device copies on the {} (median)", b.device);
    let t = Table::new("  {:<6} {memory:<9} {bytes:>12} {ms:>10.3} {GB/s:>10.1}");
    t.header();
    for c in &b.transfers {
        let memory = if c.pinned { "pinned" } else { "pageable" };
        t.row(&[
            &c.direction.label(),
            &memory,
            &c.bytes,
            &c.ms.median,
            &c.gb_per_s,
        ]);
    }
    println!("  (\"both\": a copy each way at once on two streams; GB/s counts both directions)");
}
