//! `gridsync mbarrier`: the split-phase barrier lesson.

use super::output::print_json_or;
use super::table::{Table, fmt_opt, yes_no};
use clap::Args;
use gridsync::mbarrier::{MbarrierOptions, MbarrierReport, run};
use gridsync::{Result, Target};

#[derive(Args)]
pub struct MbarrierArgs {
    /// Rounds of the relay per launch [default: 10000 on a GPU, 50 on the simulator].
    #[arg(long, value_name = "N")]
    rounds: Option<u32>,
    /// Independent operations per thread between writing and reading.
    #[arg(long, value_name = "W")]
    work: Option<u32>,
    /// Blocks [default: one per SM; 2 on the simulator].
    #[arg(long, value_name = "B")]
    blocks: Option<u32>,
}

pub fn command(target: &Target, args: &MbarrierArgs, json: bool) -> Result<()> {
    let defaults = MbarrierOptions::for_target(target);
    let opts = MbarrierOptions {
        rounds: args.rounds.unwrap_or(defaults.rounds),
        work: args.work.unwrap_or(defaults.work),
        blocks: args.blocks,
    };
    let r = run(target, &opts)?;
    print_json_or(json, &r, print_report)
}

fn print_report(r: &MbarrierReport) {
    println!("split-phase barriers (mbarrier) on the {}", r.target);
    println!(
        "  the relay: {} blocks × {} threads, {} rounds; each thread writes its slot, then reads the \
         slot of the thread 33 places on, with {} operations of its own work in between",
        r.blocks, r.threads_per_block, r.rounds, r.work
    );
    println!();
    let t = Table::new("  {kernel:<26} {stale reads:>12} {timed out:>10} {ms:>9}  {what it does}");
    t.header();
    for k in &r.runs {
        let ms = fmt_opt(k.ms, 3);
        t.row(&[&k.name, &k.stale_reads, &yes_no(k.timed_out), &ms, &k.what]);
    }
    println!();
    println!(
        "  relay_sync_threads and relay_split read no stale slot; arriving is not waiting (relay_no_wait);"
    );
    println!(
        "  a parity that is never moved on passes every other wait at once (relay_stuck_parity); waiting"
    );
    println!("  before arriving deadlocks, and the bounded wait turns the hang into an error.");
    if r.runs.iter().any(|k| k.ms.is_some()) {
        println!(
            "  ms: median of {} event-timed launches of the correct kernels.",
            gridsync::mbarrier::TRIALS
        );
    }
}
