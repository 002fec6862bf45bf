//! `gridsync pipeline`: the producer/consumer pipeline lesson.

use super::output::print_json_or;
use super::table::{Table, fmt_opt, yes_no};
use clap::Args;
use gridsync::pipeline::{PipelineOptions, PipelineReport, run};
use gridsync::{Result, Target};

#[derive(Args)]
pub struct PipelineArgs {
    /// Tiles of 4 KiB to transform [default: 64 per SM; 16 on the simulator].
    #[arg(long, value_name = "N")]
    tiles: Option<u32>,
    /// Dependent operations per word: the consumers' work.
    #[arg(long, value_name = "W")]
    work: Option<u32>,
    /// Blocks [default: one per SM; 2 on the simulator].
    #[arg(long, value_name = "B")]
    blocks: Option<u32>,
    /// Seed of the random words.
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
}

pub fn command(target: &Target, args: &PipelineArgs, json: bool) -> Result<()> {
    let defaults = PipelineOptions::for_target(target);
    let opts = PipelineOptions {
        tiles: args.tiles.unwrap_or(defaults.tiles),
        work: args.work.unwrap_or(defaults.work),
        blocks: args.blocks,
        seed: args.seed.unwrap_or(defaults.seed),
    };
    let r = run(target, &opts)?;
    print_json_or(json, &r, print_report)
}

fn print_report(r: &PipelineReport) {
    println!(
        "producer/consumer pipelines (bulk copies, mbarrier) on the {}",
        r.target
    );
    println!(
        "  {} tiles of 4 KiB through a two-stage ring per block: {} blocks × {} threads (warp 0's \
         lane 0 copies, the other warps compute {} operations per word)",
        r.tiles, r.blocks, r.threads_per_block, r.work
    );
    println!();
    let t = Table::new(
        "  {kernel:<24} {wrong words:>12} {timed out:>10} {ms:>9} {GB/s:>8}  {what it does}",
    );
    t.header();
    for k in &r.runs {
        let (ms, gb) = (fmt_opt(k.ms, 3), fmt_opt(k.gb_per_s, 0));
        t.row(&[
            &k.name,
            &k.wrong_words,
            &yes_no(k.timed_out),
            &ms,
            &gb,
            &k.what,
        ]);
    }
    println!();
    println!(
        "  Waiting on the full barrier is what makes the copied bytes visible; waiting on the empty"
    );
    println!(
        "  barrier is what keeps the next copy off a stage still being read. A copy having landed"
    );
    println!(
        "  (the producer's own full phase) says nothing about the readers: that is the empty barrier's job."
    );
    if let Some(copy) = r.copy_gb_per_s {
        println!(
            "  GB/s: bytes read and written per second, median of {} launches; the device-to-device copy of",
            gridsync::pipeline::TRIALS
        );
        println!("  the same bytes: {copy:.0} GB/s.");
    }
}
