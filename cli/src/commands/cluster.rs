//! `gridsync bench cluster`: the cost of one cluster barrier.

use super::output::{Repeats, print_json_or, progress};
use clap::Args;
use gridsync::{Result, Target};
use gridsync_cli::bench::cluster::{self as bench, ClusterBench, DEFAULT_ROUNDS, SPLIT_WORK};

#[derive(Args)]
pub struct BenchArgs {
    /// Barriers per launch.
    #[arg(long, default_value_t = DEFAULT_ROUNDS)]
    rounds: u32,
    #[command(flatten)]
    repeats: Repeats,
}

pub fn bench_command(target: &Target, args: &BenchArgs, json: bool) -> Result<()> {
    let b = bench::run(
        target,
        args.rounds,
        args.repeats.trials,
        progress(!json, "bench cluster"),
    )?;
    print_json_or(json, &b, print_bench)
}

fn print_bench(b: &ClusterBench) {
    println!(
        "cluster barrier on the {} ({} barriers per launch, median of the launches; µs per barrier)",
        b.device, b.rounds
    );
    println!();
    println!(
        "  {:>7} {:>8} {:>7} {:>9} {:>9} {:>11} {:>11}",
        "cluster", "threads", "blocks", "sync", "relaxed", "split+work", "sync, work"
    );
    for r in &b.rows {
        println!(
            "  {:>7} {:>8} {:>7} {:>9.3} {:>9.3} {:>11.3} {:>11.3}",
            r.cluster_blocks,
            r.threads_per_block,
            r.blocks,
            r.sync_us.median,
            r.relaxed_us.median,
            r.split_us.median,
            r.unsplit_us.median
        );
    }
    println!();
    println!(
        "  sync: barrier.cluster.arrive.release + wait.acquire (cg::this_cluster().sync()); relaxed: \
         arrive.relaxed; split+work: arrive, {SPLIT_WORK} dependent operations, wait; sync, work: the \
         same work after a whole barrier. Grid: every cluster the GPU holds at once."
    );
    println!();
    println!(
        "  grid barriers, {} threads per block (µs per barrier): cluster-aware (the cluster \
         barrier, then one arrival per cluster) against GridBarrier on the same blocks",
        bench::GRID_THREADS
    );
    println!(
        "  {:>7} {:>22} {:>7} {:>14} {:>12}",
        "cluster", "grid", "blocks", "cluster-aware", "GridBarrier"
    );
    for r in &b.grid_rows {
        println!(
            "  {:>7} {:>22} {:>7} {:>14.3} {:>12.3}",
            r.cluster_blocks, r.what, r.blocks, r.cluster_grid_us.median, r.grid_us.median
        );
    }
}
