//! `gridsync atomics` and `gridsync bench atomics`.

use super::output::{DEFAULT_SEED, print_json_or, progress};
use super::table::Table;
use clap::Args;
use gridsync::atomics::demo::{self, AtomicsDemo, DemoOptions};
use gridsync::atomics::f64_add::{F64Add, F64Inputs};
use gridsync::atomics::throughput::{BenchOp, Layout, Memory};
use gridsync::gpu::atomic::Scope;
use gridsync::{Result, Target};
use gridsync_cli::bench::atomics::{self as bench, AtomicsBench, AtomicsBenchOptions};

#[derive(Args)]
pub struct AtomicsArgs {
    /// The seed of every input (printed), to replay a run or explore another.
    #[arg(long, value_name = "S", default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// `double` additions per thread in the f64 checks (GPU).
    #[arg(long, default_value_t = DemoOptions::default().f64_iters)]
    iters: u32,
    /// Each thread's time budget in the f64 checks and timings, ms (GPU).
    #[arg(long, default_value_t = DemoOptions::default().budget_ms)]
    budget_ms: u32,
    /// Timed launches per f64 throughput figure (GPU).
    #[arg(long = "repeats", value_name = "N", visible_alias = "trials", default_value_t = DemoOptions::default().trials)]
    trials: u32,
}

#[derive(Args)]
pub struct BenchArgs {
    /// Operations per thread per launch.
    #[arg(long, default_value_t = AtomicsBenchOptions::default().iters)]
    iters: u32,
    /// Timed launches per configuration.
    #[arg(long = "repeats", value_name = "N", visible_alias = "trials", default_value_t = AtomicsBenchOptions::default().trials)]
    trials: u32,
    /// Threads per block.
    #[arg(long, default_value_t = bench::THREADS_PER_BLOCK)]
    threads: u32,
    /// Blocks per SM [default: as many as the SM's thread limit allows].
    #[arg(long, value_name = "B")]
    blocks_per_sm: Option<u32>,
}

/// `gridsync atomics`: runs the demo and prints it.
///
/// # Errors
/// What [`demo::run`] returns; a JSON error.
pub fn command(target: &Target, args: &AtomicsArgs, json: bool) -> Result<()> {
    let opts = DemoOptions {
        seed: args.seed,
        f64_iters: args.iters,
        budget_ms: args.budget_ms,
        trials: args.trials,
    };
    let d = demo::run(target, opts, progress(!json, "atomics"))?;
    print_json_or(json, &d, print_demo)
}

/// `gridsync bench atomics`: runs the benchmark and prints it.
///
/// # Errors
/// What [`bench::run`] returns; a JSON error.
pub fn bench_command(target: &Target, args: &BenchArgs, json: bool) -> Result<()> {
    let opts = AtomicsBenchOptions {
        iters: args.iters,
        trials: args.trials,
        threads_per_block: args.threads,
        blocks_per_sm: args.blocks_per_sm,
    };
    let b = bench::run(target, opts, progress(!json, "atomics"))?;
    print_json_or(json, &b, print_bench)
}

/// `1.23 G`, `45.6 M`, `789 k`.
fn si(x: f64) -> String {
    match x {
        x if x >= 1e9 => format!("{:.2} G", x / 1e9),
        x if x >= 1e6 => format!("{:.1} M", x / 1e6),
        x if x >= 1e3 => format!("{:.0} k", x / 1e3),
        x => format!("{x:.0} "),
    }
}

pub fn print_demo(d: &AtomicsDemo) {
    println!(
        "CUDA's atomic functions (CUDA book 9.2) on the {}: {}, seed {}",
        d.target, d.shape, d.seed
    );
    println!(
        "  each cell: cases passed / run — every type × 4 orderings, against a sequential model"
    );
    let t = Table::new("  {CUDA:<30} {types:<24} {PTX:<54} {_block:>7} {device:>7} {_system:>7}");
    t.header();
    for row in &d.table {
        let types: Vec<&str> = row.types.iter().map(|t| t.name()).collect();
        let [block, device, system] = [0, 1, 2].map(|i| {
            row.scopes
                .get(i)
                .map_or_else(String::new, |t| format!("{}/{}", t.passed, t.cases))
        });
        let (cuda, ptx) = (row.function.cuda, row.function.ptx);
        t.row(&[&cuda, &types.join(" "), &ptx, &block, &device, &system]);
        if let Some(why) = &row.first_failure {
            println!("      first failure: {why}");
        }
    }
    let (passed, cases) = d.table.iter().fold((0, 0), |(p, n), r| {
        let (rp, rn) = r.totals();
        (p + rp, n + rn)
    });
    println!("  {passed} of {cases} cases passed");
    println!();

    let f = &d.f64_add;
    println!("double atomicAdd two ways, against a float64 reference (bit-exact for integers):");
    for kind in F64Add::ALL {
        println!("  {:<9} {}: {}", kind.name(), kind.cuda(), kind.ptx());
    }
    let t = Table::new("  {layout:<8} {inputs:<9} {words:>8} {cas_loop:>36} {native:>36}");
    t.header();
    for c in f.checks.iter().filter(|c| c.kind == F64Add::CasLoop) {
        let native = f
            .checks
            .iter()
            .find(|n| n.kind == F64Add::Native && n.inputs == c.inputs && n.shape == c.shape);
        let show = |c: &gridsync::atomics::f64_add::F64AddCheck| match c.inputs {
            F64Inputs::Integers => format!("{} adds exact", c.adds),
            F64Inputs::Random => format!(
                "{} adds, err {:.0e} ({:.0e} of bound)",
                c.adds, c.max_abs_error, c.max_error_over_bound
            ),
        };
        let layout = layout_of(c.shape.threads_per_address, c.shape.threads());
        let inputs = format!("{:?}", c.inputs).to_lowercase();
        let native = native.map(show).unwrap_or_default();
        t.row(&[&layout, &inputs, &c.addresses, &show(c), &native]);
    }
    if let Some(why) = &f.throughput_skipped {
        println!("  throughput: not measured ({why})");
        return;
    }
    println!(
        "  throughput: each thread adds for {} ms; adds completed / event time, median of {} launches",
        f.throughput
            .first()
            .map(|t| t.shape.budget_ns / 1_000_000)
            .unwrap_or(0),
        f.throughput.first().map(|t| t.ms.samples).unwrap_or(0)
    );
    println!(
        "  {:<8} {:>14} {:>14} {:>11}   adds per thread, cas_loop (min–max)",
        "layout", "cas_loop", "native", "native/cas"
    );
    for layout in demo::F64_LAYOUTS {
        let find = |kind| {
            f.throughput
                .iter()
                .find(|t| t.kind == kind && t.layout == layout)
        };
        if let (Some(cas), Some(native)) = (find(F64Add::CasLoop), find(F64Add::Native)) {
            let (c, n) = (cas.adds_per_s.median, native.adds_per_s.median);
            println!(
                "  {:<8} {:>12}/s {:>12}/s {:>10.1}×   {}–{}",
                layout.name(),
                si(c),
                si(n),
                n / c,
                cas.min_adds_per_thread,
                cas.max_adds_per_thread
            );
        }
    }
}

fn layout_of(threads_per_address: u32, threads: u64) -> &'static str {
    match threads_per_address {
        1 => "thread",
        32 => "warp",
        t if t as u64 >= threads => "grid",
        _ => "block",
    }
}

pub fn print_bench(b: &AtomicsBench) {
    let s = &b.shape;
    println!(
        "atomic throughput on the {}: {} blocks × {} threads, {} operations per thread, median of {} trials",
        b.device, s.blocks, s.threads_per_block, s.iters, b.trials
    );
    println!("  operations per second; layout = the threads sharing one word (grid: all of them)");
    let t = Table::new("  {op:<12} {memory:<7} {layout:<7} {block:>11} {device:>11} {system:>11}");
    t.header();
    for op in BenchOp::ALL {
        for memory in [Memory::Global, Memory::Shared] {
            for layout in Layout::ALL {
                let cell = |scope| {
                    b.rows
                        .iter()
                        .find(|r| {
                            r.config.op == op
                                && r.config.memory == memory
                                && r.config.layout == layout
                                && r.config.scope == scope
                        })
                        .map(|r| match r.cas_success {
                            Some(ok) => format!("{} ({:.0}%)", si(r.ops_per_s), ok * 100.0),
                            None => si(r.ops_per_s),
                        })
                };
                let cells = Scope::ALL.map(cell);
                if cells.iter().all(Option::is_none) {
                    continue;
                }
                let [block, device, system] = cells.map(|c| c.unwrap_or_else(|| "—".into()));
                let memory = format!("{memory:?}").to_lowercase();
                t.row(&[
                    &op.name(),
                    &memory,
                    &layout.name(),
                    &block,
                    &device,
                    &system,
                ]);
            }
        }
    }
    println!("  (cas_u32: attempts per second, and the share that succeeded)");
    println!();
    println!("ratios of operations per second");
    let t = Table::new(
        "  {op:<12} {layout:<7} {system/device:>14} {device/block:>14} {shared/global:>14}",
    );
    t.header();
    let show = |x: Option<f64>| x.map(|x| format!("{x:.2}")).unwrap_or_else(|| "—".into());
    for r in &b.ratios {
        let ratios = [
            r.system_over_device,
            r.device_over_block,
            r.shared_over_global,
        ];
        let [sys, dev, shared] = ratios.map(show);
        t.row(&[&r.op.name(), &r.layout.name(), &sys, &dev, &shared]);
    }
}
