//! `info` and `race`: the device report and the first demo (the tour prints both).

use gridsync::{Gpu, race};

pub fn print_info(gpu: &Gpu) {
    let i = gpu.info();
    println!("device {}: {}", i.ordinal, i.name);
    println!(
        "  compute capability  {}.{} (running the {} PTX)",
        i.compute_capability.0, i.compute_capability.1, i.ptx_arch
    );
    println!("  multiprocessors     {}", i.sm_count);
    println!(
        "  memory              {:.1} GiB, {}-bit bus, {} MHz",
        i.total_memory_bytes as f64 / (1u64 << 30) as f64,
        i.memory_bus_bits,
        i.memory_clock_khz / 1000
    );
    println!("  L2 cache            {} MiB", i.l2_bytes >> 20);
    println!("  SM clock            {} MHz", i.clock_khz / 1000);
    println!(
        "  threads             {} per block, {} per SM",
        i.max_threads_per_block, i.max_threads_per_sm
    );
    println!(
        "  shared memory       {} KiB per block ({} KiB opt-in), {} KiB per SM",
        i.shared_bytes_per_block >> 10,
        i.shared_bytes_per_block_optin >> 10,
        i.shared_bytes_per_sm >> 10
    );
    println!(
        "  cooperative launch  {}",
        if i.cooperative_launch { "yes" } else { "no" }
    );
    println!(
        "  driver              CUDA {}.{}",
        i.driver_version / 1000,
        i.driver_version % 1000 / 10
    );
}

pub fn print_race(r: &race::RaceReport) {
    println!(
        "race: {} blocks × {} threads, each adding 1 to x[0], on the {}",
        r.blocks, r.threads_per_block, r.target
    );
    println!(
        "  add_one             (x[0] = x[0] + 1)  x[0] = {:>6}   ({} of {} updates lost)",
        r.racy,
        r.lost(),
        r.expected
    );
    println!(
        "  add_one_atomic      (atomic add)       x[0] = {:>6}   (exactly {})",
        r.atomic, r.expected
    );
    println!(
        "  add_one_block_scope (atomicAdd_block)  x[0] = {:>6}   ({}; a scope race all the same)",
        r.block_scope,
        if r.block_scope == r.expected {
            "right this time"
        } else {
            "updates lost"
        }
    );
    println!();
    for line in race::EXPLANATION.lines() {
        println!("  {line}");
    }
}
