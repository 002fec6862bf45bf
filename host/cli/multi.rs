//! `gridsync multi`: one library call over every GPU of the node.

use super::output::{parse_option, print_json_or};
use clap::{Args, ValueEnum};
use gridsync::Result;
use gridsync::multi::report::{MultiOp, MultiReport, run};
use gridsync::multi::{DeviceList, DeviceSet};

/// The operations, as the command line names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Op {
    /// Σ (f64 accumulation), min and max of uniform floats in [-1, 1).
    Reduce,
    /// A 256-bin histogram of uniform bytes.
    Histogram,
    /// Floats above 0.5.
    CountAbove,
}

#[derive(Args)]
pub struct MultiArgs {
    /// What to run.
    #[arg(value_enum)]
    op: Op,
    /// The devices: all, or ordinals such as 0,1 (on the simulator, that many simulated
    /// devices; all means 2).
    #[arg(long, default_value = "all", value_parser = parse_option::<DeviceList>)]
    devices: DeviceList,
    /// Elements of the input (floats, or bytes for the histogram) [default: 100000000 on a GPU,
    /// 100003 on the simulator].
    #[arg(long, value_name = "N")]
    len: Option<usize>,
    /// Timed runs of each (the median is shown).
    #[arg(long, default_value_t = 5)]
    repeats: u32,
}

pub fn command(simulate: bool, args: &MultiArgs, json: bool) -> Result<()> {
    let set = DeviceSet::open(&args.devices, simulate)?;
    let len = args
        .len
        .unwrap_or(if simulate { 100_003 } else { 100_000_000 });
    let bytes_each = if args.op == Op::Histogram { 1 } else { 4 };
    gridsync::runtime::memory::check_host("--len", (len as u64).saturating_mul(bytes_each * 2))?;
    let op = match args.op {
        Op::Reduce => MultiOp::Reduce,
        Op::Histogram => MultiOp::Histogram,
        Op::CountAbove => MultiOp::CountAbove,
    };
    let r = run(&set, op, len, args.repeats)?;
    print_json_or(json, &r, print_report)
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
        "  wall ms, input starting in host memory (uploads included), median: one device {:.3}, all {:.3}; scaling efficiency {:.2}",
        r.one_device_ms, r.all_devices_ms, r.scaling_efficiency
    );
}
