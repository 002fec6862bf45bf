//! What `gridsync multi` prints: the reports of [`super::report`], [`super::ranks`] and
//! [`super::scope`], and `gridsync bench multi`'s table.

use super::ranks::RankReport;
use super::report::MultiReport;
use super::scope::ScopeReport;
use crate::commands::table::{Table, percent, sci};
use gridsync::multi::devices::peer::PeerObject;
use gridsync_cli::bench::multi::MultiBench;

pub fn print_rank_report(r: &RankReport) {
    println!(
        "{:?} over {} rank(s) (from {}), rank 0 on {}",
        r.op, r.world, r.source, r.device
    );
    println!(
        "  input: {}, {} elements, slices {:?}",
        r.input, r.len, r.slices
    );
    if r.bytes_read.iter().any(|&b| b > 0) {
        println!("  bytes read by each rank: {:?}", r.bytes_read);
    }
    println!("  combine: {}", r.combine);
    let t = Table::new(
        "  {op:<12} {result:>24} {CPU:>34} {ms:>10.3} {GB/s:>9.1}  {each rank's median ms}",
    );
    t.header();
    for row in &r.rows {
        let each: Vec<String> = row.ms_per_rank.iter().map(|m| format!("{m:.3}")).collect();
        let each = each.join(" ");
        t.row(&[
            &row.op,
            &row.result,
            &row.expected,
            &row.ms,
            &row.gb_per_s,
            &each,
        ]);
    }
    println!(
        "  ms: the slowest rank's median of whole calls (kernel, combine, result on the host), \
         input on the GPUs, the ranks lined up by a barrier before each; every rank's result \
         matched the CPU"
    );
}

pub fn print_report(r: &MultiReport) {
    println!(
        "{:?} over {} device(s): {}",
        r.op,
        r.devices.len(),
        r.devices.join(", ")
    );
    println!("  input: {} elements, slices {:?}", r.len, r.slices);
    println!("  result: {}", r.result);
    println!("  CPU:    {}", r.expected);
    println!("  combine: {}", r.combine);
    println!(
        "  input on the devices (the operation alone), wall ms, median: one device {:.3}, all \
         {:.3}; scaling efficiency {:.2}",
        r.one_device_ms, r.all_devices_ms, r.scaling_efficiency
    );
    println!(
        "  upload of the input from host memory (allocation included): one device {:.3} ms, all \
         {:.3} ms",
        r.upload_one_device_ms, r.upload_all_devices_ms
    );
    println!(
        "  one call from host memory (upload included; combine: the host): one device {:.3} ms, \
         all {:.3} ms; efficiency {:.2}",
        r.whole_call_one_device_ms, r.whole_call_all_devices_ms, r.whole_call_efficiency
    );
}

pub fn print_scope(r: &ScopeReport) {
    println!("devices: {}", r.devices.join(", "));
    println!("shared words in {}", r.home);
    let t = Table::new(
        "  {object:<8} {scope:<7} {devices:>7} {data:>5} {grid:>10} {iters:>6} {expected:>12} \
         {counted:>12} {wrong:>8} {ms:>10.3} {per second:>14}",
    );
    t.header();
    for row in &r.rows {
        let object = match row.object {
            PeerObject::Counter => "counter",
            PeerObject::Lock => "lock",
            PeerObject::Barrier => "barrier",
        };
        match (&row.run, &row.error) {
            (Some(x), _) => {
                let grid = format!("{}x{}", x.grid.0, x.grid.1);
                let rate = sci(x.per_second, 4);
                t.row(&[
                    &object,
                    &row.scope,
                    &row.devices,
                    &row.data_device,
                    &grid,
                    &x.per_thread,
                    &x.expected,
                    &x.counted,
                    &x.wrong,
                    &x.ms,
                    &rate,
                ]);
            }
            (None, Some(e)) => println!(
                "  {:<8} {:<7} {:>7} failed: {e}",
                object, row.scope, row.devices
            ),
            (None, None) => {}
        }
    }
    println!(
        "  counter, lock: expected = every thread's adds; barrier: expected = reads checked after a barrier, wrong = stale"
    );
    println!(
        "  data: the device holding what the lock guards, or the barrier's slots (the lock and barrier words are in device 0's memory)"
    );
}

pub fn print_bench(b: &MultiBench) {
    println!("devices: {}", b.devices.join(", "));
    println!("combine: {}", b.combine);
    let h2d: Vec<String> = b.h2d_gb_per_s.iter().map(|g| format!("{g:.1}")).collect();
    println!(
        "device 0 copy roofline {:.0} GB/s; pinned host-to-device GB/s per device alone: {}",
        b.copy_gb_per_s,
        h2d.join(", ")
    );
    let t = Table::new(
        "  {op:<11} {GPUs:>4} {GB:>11.3} | {resid. ms:>9.3} {GB/s:>8.0} {eff.:>6.3} {combine:>9.4} \
         {share:>7} | {host ms:>9.2} {GB/s:>8.1} {eff.:>6.3} {of bus:>7}",
    );
    t.header();
    for r in &b.rows {
        let (share, of_bus) = (percent(r.combine_share, 1), percent(r.host_of_bus, 1));
        t.row(&[
            &r.op,
            &r.devices,
            &(r.bytes as f64 / 1e9),
            &r.resident_ms.median,
            &r.resident_gb_per_s,
            &r.resident_efficiency,
            &r.combine_ms.median,
            &share,
            &r.host_ms.median,
            &r.host_gb_per_s,
            &r.host_efficiency,
            &of_bus,
        ]);
    }
    println!(
        "  medians; wall time of the whole call (kernels on every device, combine, result on the host); eff. = time on 1 / (GPUs × time)"
    );
}
