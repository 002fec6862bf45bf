//! `gridsync dot` and `gridsync bench dot`.

use super::output::{print_copy_roofline, print_json, progress};
use clap::Args;
use gridsync::bench::copy;
use gridsync::bench::dot::{self as bench, DotBench};
use gridsync::dot::{DEFAULT_LEN, DotReport, SIM_DEFAULT_LEN, random_data, run, source_data};
use gridsync::{Result, Target};

#[derive(Args)]
pub struct DotArgs {
    /// Elements per array [default: 10000000 on a GPU, 10000 on the simulator].
    #[arg(long, value_name = "N")]
    len: Option<usize>,
    /// Fresh random data in [-1, 1) instead of the source's a = 1, b = 1/N.
    #[arg(long)]
    random: bool,
    /// The seed of the random data (implies --random), to replay a run.
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
}

#[derive(Args)]
pub struct BenchArgs {
    /// Elements per array, comma-separated [default: 10000000,1000000000].
    #[arg(long, value_name = "N,...", value_delimiter = ',')]
    len: Vec<usize>,
    /// Timed launches per kernel and size.
    #[arg(long, default_value_t = 20)]
    trials: u32,
    /// Blocks per SM of dot_vec4 [default: as many as fit, from the occupancy calculator].
    #[arg(long, value_name = "B")]
    blocks_per_sm: Option<u32>,
    /// Bytes of the device-to-device copy measured as the roofline.
    #[arg(long, default_value_t = copy::DEFAULT_BYTES)]
    copy_bytes: usize,
}

pub fn command(target: &Target, args: &DotArgs, json: bool) -> Result<()> {
    let default = if target.is_sim() {
        SIM_DEFAULT_LEN
    } else {
        DEFAULT_LEN
    };
    let n = args.len.unwrap_or(default);
    let seed = args.seed.or(args.random.then(fresh_seed));
    let ((a, b), data) = match seed {
        Some(seed) => (
            random_data(n, seed),
            format!("random in [-1, 1), --seed {seed}"),
        ),
        None => (source_data(n), "the source's: a = 1, b = 1/N".into()),
    };
    let r = run(target, &a, &b, &data, progress(!json, "dot"))?;
    if json {
        return print_json(&r);
    }
    print_report(&r);
    Ok(())
}

fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}

fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("—".into(), |v| format!("{v:.digits$}"))
}

pub fn print_report(r: &DotReport) {
    println!("dot on the {}: N = {}, data {}", r.target, r.len, r.data);
    println!(
        "  CPU (float64): {:.10}   (Σ|a·b| = {:.6e})",
        r.cpu.dot, r.cpu.sum_abs
    );
    println!();
    println!(
        "  {:<12} {:>18} {:>10} {:>10} {:>9} {:>8}  how",
        "kernel", "result", "rel. error", "grid", "ms", "GB/s"
    );
    for k in &r.runs {
        println!(
            "  {:<12} {:>18.10} {:>10.2e} {:>10} {:>9} {:>8}  {}",
            k.name,
            k.result,
            k.rel_error,
            format!("{}×{}", k.blocks, k.threads_per_block),
            fmt_opt(k.ms, 4),
            fmt_opt(k.gb_per_s, 0),
            k.what
        );
    }
    println!();
    println!(
        "  The source's dot_mutex reduced with s_block[tid + 1]; here every kernel uses \
         s_block[tid + i]."
    );
    if r.runs.iter().all(|k| k.ms.is_none()) {
        println!("  No timings: the simulator's speed says nothing about a GPU's.");
    } else {
        println!(
            "  ms: one event-timed launch after a warm-up; dot_partial without the host's sum."
        );
    }
}

pub fn bench_command(target: &Target, args: &BenchArgs, json: bool) -> Result<()> {
    let defaults = bench::default_options();
    let opts = gridsync::bench::SizedBenchOptions {
        lens: if args.len.is_empty() {
            defaults.lens
        } else {
            args.len.clone()
        },
        trials: args.trials,
        blocks_per_sm: args.blocks_per_sm,
        copy_bytes: args.copy_bytes,
    };
    let b = bench::run(target, &opts, progress(!json, "bench dot"))?;
    if json {
        return print_json(&b);
    }
    print_bench(&b);
    Ok(())
}

pub fn print_bench(b: &DotBench) {
    println!(
        "dot benchmark on the {} (median of {} trials)",
        b.device, b.copy.ms.samples
    );
    print_copy_roofline(&b.copy);
    for s in &b.sizes {
        println!();
        println!("  n = {} ({} bytes read per dot)", s.len, s.bytes_read);
        if let Some(why) = &s.skipped {
            println!("    skipped: {why}");
            continue;
        }
        println!(
            "    {:<12} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>10}",
            "kernel", "grid", "median ms", "min ms", "max ms", "GB/s", "of copy", "rel. error"
        );
        for k in &s.kernels {
            println!(
                "    {:<12} {:>10} {:>10.4} {:>10.4} {:>10.4} {:>8.0} {:>7.1}% {:>10.2e}",
                k.name,
                format!("{}×{}", k.blocks, k.threads_per_block),
                k.ms.median,
                k.ms.min,
                k.ms.max,
                k.gb_per_s,
                100.0 * k.fraction_of_copy,
                k.rel_error
            );
        }
    }
    println!();
    println!("  {}", b.definition);
    println!("  Reference (H200): cuBLAS via torch.dot, 10⁷: 0.027 ms.");
}
