//! `gridsync mutex` and `gridsync bench mutex`: printing.

use gridsync::locks::{self, MutexDemo};
use gridsync_cli::bench::locks::MutexBench;

fn rate(m: Option<f64>) -> String {
    m.map_or_else(|| "-".into(), |m| format!("{m:.3}"))
}

pub fn print_demo(d: &MutexDemo) {
    println!("mutex: every lock of the progression, on the {}", d.target);
    println!(
        "  add_one_mutex at 10×16 (Numba 4.5): x[0] = {} (expected 160)",
        d.add_one_mutex
    );
    println!();
    println!(
        "  {:<12} {:>9} {:>9} {:>9} {:>6} {:>10}  what",
        "variant", "shape", "counter", "expected", "lost", "M/s"
    );
    for r in &d.runs {
        println!(
            "  {:<12} {:>9} {:>9} {:>9} {:>6} {:>10}  {}",
            r.variant.kernel().trim_start_matches("lock_"),
            r.shape.to_string(),
            r.counter,
            r.expected,
            r.lost(),
            rate(r.mega_per_s()),
            r.variant.what()
        );
    }
    println!("  (M/s: millions of critical sections per second, one launch, event-timed)");
    println!();
    let h = &d.held_forever;
    println!(
        "  a lock held forever ({} waiters, {:.0} ms timeout): the call returned after {:.0} ms with",
        h.shape, h.timeout_ms, h.took_ms
    );
    println!("    \"{}\"", h.error);
    println!();
    for line in locks::EXPLANATION.lines() {
        println!("  {line}");
    }
}

pub fn print_bench(b: &MutexBench) {
    println!("mutex benchmark on the {}", b.device);
    println!(
        "  {:<12} {:>9} {:>6} {:>9} {:>10} {:>10} {:>6}",
        "variant", "shape", "iters", "sections", "median ms", "M/s", "lost"
    );
    for c in &b.cells {
        println!(
            "  {:<12} {:>9} {:>6} {:>9} {:>10.3} {:>10.3} {:>6}",
            c.variant.kernel().trim_start_matches("lock_"),
            c.shape.to_string(),
            c.iters,
            c.sections,
            c.ms.median,
            c.mega_per_s,
            c.lost
        );
    }
    if !b.sweep.is_empty() {
        println!();
        println!("  back-off sweep (M critical sections/s)");
        for p in &b.sweep {
            let what = match p.variant {
                gridsync::locks::Variant::Ticket => {
                    format!("ticket, {} ns per ticket ahead", p.backoff_min_ns)
                }
                _ => format!("mutex, {}..{} ns", p.backoff_min_ns, p.backoff_max_ns),
            };
            println!(
                "  {:>9}  {:<36} {:>8.3}",
                p.shape.to_string(),
                what,
                p.mega_per_s
            );
        }
    }
}

pub fn print_scopes(b: &gridsync_cli::bench::scopes::ScopesBench) {
    println!(
        "ordering cost by scope on the {} ({} threads, {} operations each, each on its own word)",
        b.device, b.threads, b.iters
    );
    println!(
        "  {:<18} {:>8} {:>10} {:>12} {:>14}",
        "operation", "scope", "median ms", "G ops/s", "ns/op/thread"
    );
    for c in &b.cells {
        println!(
            "  {:<18} {:>8} {:>10.3} {:>12.2} {:>14.1}",
            c.op, c.scope, c.ms.median, c.g_ops_per_s, c.ns_per_op_per_thread
        );
    }
    println!();
    for (op, _) in gridsync_cli::bench::scopes::KINDS
        .iter()
        .map(|(k, o)| (o, k))
    {
        if let (Some(dev_sys), Some(blk_dev)) = (
            b.ratio(op, "device", "system"),
            b.ratio(op, "block", "device"),
        ) {
            println!("  {op:<18} device is {dev_sys:.2}× system, block is {blk_dev:.2}× device");
        }
    }
}
