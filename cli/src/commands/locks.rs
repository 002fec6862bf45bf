//! `gridsync mutex` and `gridsync bench mutex`: printing.

use gridsync::locks::{self, MutexDemo};
use gridsync_cli::bench::locks::MutexBench;

use super::table::Table;

fn variant_name(v: locks::Variant) -> &'static str {
    v.kernel().trim_start_matches("lock_")
}

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
    let t = Table::new(
        "  {variant:<12} {shape:>9} {counter:>9} {expected:>9} {lost:>6} {M/s:>10}  {what}",
    );
    t.header();
    for r in &d.runs {
        let (name, rate) = (variant_name(r.variant), rate(r.mega_per_s()));
        t.row(&[
            &name,
            &r.shape,
            &r.counter,
            &r.expected,
            &r.lost(),
            &rate,
            &r.variant.what(),
        ]);
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
    let t = Table::new(
        "  {variant:<12} {shape:>9} {iters:>6} {sections:>9} {median ms:>10.3} {M/s:>10.3} {lost:>6}",
    );
    t.header();
    for c in &b.cells {
        let name = variant_name(c.variant);
        t.row(&[
            &name,
            &c.shape,
            &c.iters,
            &c.sections,
            &c.ms.median,
            &c.mega_per_s,
            &c.lost,
        ]);
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
                "  {:>9}  {what:<36} {:>8.3}",
                p.shape.to_string(),
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
    let t = Table::new(
        "  {operation:<18} {scope:>8} {median ms:>10.3} {G ops/s:>12.2} {ns/op/thread:>14.1}",
    );
    t.header();
    for c in &b.cells {
        t.row(&[
            &c.op,
            &c.scope,
            &c.ms.median,
            &c.g_ops_per_s,
            &c.ns_per_op_per_thread,
        ]);
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
