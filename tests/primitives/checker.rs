//! The checker on real kernels on the simulator (`gpu::sim::check::checked`): the race lesson's
//! lost update, a block-scope counter that two blocks share, a shared-memory word read before
//! the barrier — each found with both lines — and their fixes found clean.

use gpu::atomic::{atomic_add_block, atomic_add_device};
use gpu::mem::Ptr;
use gpu::sim::check::{FindingKind, Options, Report, Space, VolatileAs, checked};
use gridsync::LaunchConfig;
use std::sync::atomic::AtomicU32;

/// The race lesson's source, to find its lines in.
const RACE_RS: &str = include_str!("../../gpu/src/lessons/race.rs");
/// This file's source, for the lines of its own kernels.
const THIS_RS: &str = include_str!("checker.rs");

/// The last line of `source` that holds `text` (1-based, as `#[track_caller]` counts): in
/// this file, the kernel's, below the call that looks for it.
fn line_of(source: &str, text: &str) -> u32 {
    let i = (source.lines().collect::<Vec<_>>())
        .iter()
        .rposition(|l| l.contains(text))
        .unwrap_or_else(|| panic!("no line with {text}"));
    i as u32 + 1
}

/// A word of host memory the simulated threads share, as the kernels take it.
fn word() -> (Box<AtomicU32>, usize) {
    let w = Box::new(AtomicU32::new(0));
    let p = w.as_ptr() as usize;
    (w, p)
}

/// Each finding as (kind, the lower line, the higher line, the file of both, the space); not
/// the uninitialized reads, which a read that comes before the write it races with also is
/// (whether it does depends on the run's order: `races` of a handoff without its barrier).
fn found(report: &Report) -> Vec<(FindingKind, u32, u32, &'static str, Space)> {
    report
        .findings
        .iter()
        .filter(|f| f.kind != FindingKind::UninitializedRead)
        .map(|f| {
            let (a, b) = (f.first.site.line(), f.second.site.line());
            assert_eq!(f.first.site.file(), f.second.site.file(), "{f}");
            (
                f.kind,
                a.min(b),
                a.max(b),
                f.first.site.file(),
                f.first.bytes.space,
            )
        })
        .collect()
}

/// [`found`] without the file: (kind, the lower line, the higher line, the space).
fn found_in_space(report: &Report) -> Vec<(FindingKind, u32, u32, Space)> {
    let found = found(report).into_iter();
    found.map(|(k, a, b, _, space)| (k, a, b, space)).collect()
}

/// Checking a volatile access as a plain one: `add_one`'s load and store then race (as PTX
/// counts them, volatile accesses are relaxed at system scope and do not).
const STRICT: Options = Options {
    volatile: VolatileAs::Plain,
    ..Options::DEFAULT
};

#[test]
fn the_default_options_are_the_checkers() {
    assert_eq!(Options::DEFAULT, Options::default());
}

#[test]
fn add_one_is_a_data_race_between_its_load_and_its_store() {
    let (x, p) = word();
    let cfg = LaunchConfig::linear(2, 16);
    let (r, report) = checked(Options::DEFAULT, || {
        // SAFETY: `p` is one live `u32`; the race on it is the lesson.
        gpu::sim::launch(&cfg, || unsafe {
            gpu::lessons::race::add_one(p as *mut u32)
        })
    });
    r.unwrap();
    assert!(x.into_inner() <= 32);
    let (load, store) = (line_of(RACE_RS, "x.load()"), line_of(RACE_RS, "x.store("));
    let got = found(&report);
    assert!(
        got.iter()
            .any(|&(k, a, b, file, space)| k == FindingKind::DataRace
                && (a, b) == (load, store)
                && file.ends_with("lessons/race.rs")
                && space == Space::Global),
        "{report}"
    );
    // Every finding is between those two lines (store–store, load–store).
    assert!(
        got.iter()
            .all(|&(_, a, b, ..)| [load, store].contains(&a) && [load, store].contains(&b)),
        "{report}"
    );
    assert_eq!(report.launches, 1);
}

#[test]
fn volatile_accesses_race_only_when_volatile_counts_as_plain() {
    let run = |options| {
        let (_x, p) = word();
        let (r, report) = checked(options, || {
            gpu::sim::launch(&LaunchConfig::linear(2, 16), || add_one_volatile(p))
        });
        r.unwrap();
        report
    };
    let report = run(Options::DEFAULT);
    assert!(report.is_clean(), "{report}");
    assert!(report.events >= 64, "{report}");
    let report = run(STRICT);
    let (load, store) = (
        line_of(THIS_RS, "x.load_volatile()"),
        line_of(THIS_RS, "x.store_volatile("),
    );
    assert!(
        found(&report)
            .iter()
            .any(|&(k, a, b, ..)| k == FindingKind::DataRace && (a, b) == (load, store)),
        "{report}"
    );
}

/// `add_one` with volatile accesses (`ld.volatile`, `st.volatile`): the lost update is still
/// there, but as PTX counts volatile (relaxed at system scope) not a data race.
fn add_one_volatile(p: usize) {
    let x = Ptr::new(p as *mut u32);
    // SAFETY: `p` is one live `u32`; the race on it is the point.
    unsafe {
        let old = x.load_volatile();
        x.store_volatile(old + 1);
    }
}

#[test]
fn add_one_atomic_is_clean() {
    let (x, p) = word();
    let (r, report) = checked(STRICT, || {
        // SAFETY: `p` is one live `u32`, touched only atomically.
        gpu::sim::launch(&LaunchConfig::linear(2, 16), || unsafe {
            gpu::lessons::race::add_one_atomic(p as *mut u32)
        })
    });
    r.unwrap();
    assert_eq!(x.into_inner(), 32);
    assert!(report.is_clean(), "{report}");
    assert_eq!((report.launches, report.events), (1, 32), "{report}");
}

/// Every thread of 2 blocks × 16 adds one to a counter at `device` or block scope; returns the
/// report and the line of the add.
fn shared_counter(device: bool) -> (Report, u32) {
    let (x, p) = word();
    let line = line_of(THIS_RS, "atomic_add_block(x, 1)");
    let ((), report) = checked(Options::default(), || {
        gpu::sim::launch(&LaunchConfig::linear(2, 16), || {
            let x = p as *mut u32;
            // SAFETY: one live `u32`, touched only atomically.
            unsafe {
                if device {
                    atomic_add_device(x, 1)
                } else {
                    atomic_add_block(x, 1)
                };
            }
        })
        .unwrap()
    });
    assert_eq!(x.into_inner(), 32);
    (report, line)
}

#[test]
fn a_block_scope_counter_shared_by_two_blocks_is_a_scope_race() {
    let (report, line) = shared_counter(false);
    let got = found(&report);
    assert_eq!(got.len(), 1, "{report}");
    let (kind, a, b, file, _) = got[0];
    assert_eq!(
        (kind, a, b),
        (FindingKind::ScopeRace, line, line),
        "{report}"
    );
    assert!(file.ends_with("checker.rs"), "{file}");
    // Between blocks only: the threads of one block share the scope.
    let f = &report.findings[0];
    assert_ne!(f.first.thread.block, f.second.thread.block, "{f}");
}

#[test]
fn a_device_scope_counter_shared_by_two_blocks_is_clean() {
    let (report, _) = shared_counter(true);
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.events, 32);
}

/// Thread 0 of each block writes a shared word; thread 1 reads it, after `sync_threads` if
/// `barrier` (every thread passes it). Returns the report, the store's and the load's lines.
fn shared_handoff(barrier: bool) -> (Report, u32, u32) {
    let cfg = LaunchConfig::linear(2, 32).with_shared_bytes(4);
    let (_seen, p) = word();
    let store = line_of(THIS_RS, "s.store(7)");
    let load = line_of(THIS_RS, "s.load()");
    let ((), report) = checked(Options::default(), || {
        gpu::sim::launch(&cfg, || {
            // SAFETY: the launch gives each block 4 bytes of shared memory.
            let s = Ptr::new(unsafe { gpu::shared::dynamic_shared::<u32>() });
            let t = gpu::index::thread_idx_x();
            if t == 0 {
                unsafe { s.store(7) };
            }
            if barrier {
                gpu::sync::sync_threads();
            }
            if t == 1 {
                let v = unsafe { s.load() };
                // SAFETY: one live `u32`, touched only atomically.
                unsafe { atomic_add_device(p as *mut u32, v) };
            }
        })
        .unwrap()
    });
    (report, store, load)
}

#[test]
fn a_shared_word_read_before_the_barrier_is_a_data_race_in_shared_memory() {
    let (report, store, load) = shared_handoff(false);
    assert_eq!(
        found_in_space(&report),
        [(FindingKind::DataRace, store, load, Space::Shared)],
        "{report}"
    );
    let race = report.of_kind(FindingKind::DataRace).next();
    assert_eq!(
        race.map(|f| f.count),
        Some(2),
        "one race per block: {report}"
    );
}

#[test]
fn a_shared_word_read_after_the_barrier_is_clean() {
    let (report, ..) = shared_handoff(true);
    assert!(report.is_clean(), "{report}");
}

#[test]
fn a_weak_launch_is_checked_too() {
    use gridsync::locks::{Shape, Variant, run_variant};
    let run = |variant| {
        let ((ran, report), _) = gpu::sim::weak::scoped(7, || {
            checked(Options::DEFAULT, || {
                let shape = Shape {
                    blocks: 2,
                    threads: 8,
                };
                let target = gridsync::Target::Sim;
                run_variant(&target, variant, shape, 3, gridsync::MutexBounds::default())
            })
        });
        (ran.unwrap(), report)
    };
    // The unfenced lock: its critical section races, found on the weak memory as on the
    // host's (where its lost updates, if any, are the weak memory's doing).
    let (lock, report) = run(Variant::Unfenced);
    assert!(lock.counter <= lock.expected);
    assert!(
        report.of_kind(FindingKind::DataRace).next().is_some(),
        "{report}"
    );
    // The fenced one: every update, nothing found.
    let (lock, report) = run(Variant::Fenced);
    assert_eq!(lock.counter, lock.expected);
    assert!(report.is_clean(), "{report}");
}

/// Thread 0 of block 0 writes a global word, then the cluster's threads meet at the cluster
/// barrier — arriving with a release (`release`) or relaxed — and thread 0 of block 1, the
/// other block of the cluster, reads the word. Returns the report, the store's and the load's
/// lines.
fn cluster_handoff(release: bool) -> (Report, u32, u32) {
    use gpu::cluster::{cluster_arrive, cluster_arrive_relaxed, cluster_wait};
    let store = line_of(THIS_RS, "x.store(7)");
    let load = line_of(THIS_RS, "x.load()");
    let cfg = LaunchConfig::linear(2, 32).with_cluster(2.into());
    let (_x, p) = word();
    let ((), report) = checked(Options::default(), || {
        gpu::sim::launch(&cfg, || {
            let x = Ptr::new(p as *mut u32);
            let (b, t) = (gpu::index::block_idx_x(), gpu::index::thread_idx_x());
            if (b, t) == (0, 0) {
                // SAFETY: one live `u32`.
                unsafe { x.store(7) };
            }
            if release {
                cluster_arrive();
            } else {
                cluster_arrive_relaxed();
            }
            cluster_wait();
            if (b, t) == (1, 0) {
                // SAFETY: one live `u32`.
                assert_eq!(unsafe { x.load() }, 7);
            }
        })
        .unwrap()
    });
    (report, store, load)
}

#[test]
fn a_word_read_after_the_cluster_barrier_is_clean() {
    let (report, ..) = cluster_handoff(true);
    assert!(report.is_clean(), "{report}");
}

#[test]
fn a_relaxed_arrival_at_the_cluster_barrier_releases_nothing() {
    let (report, store, load) = cluster_handoff(false);
    assert_eq!(
        found_in_space(&report),
        [(FindingKind::DataRace, store, load, Space::Global)],
        "{report}"
    );
}

/// What checking costs on the lessons' own shapes: each library call timed plain and checked
/// on the simulator, with the checked run's report (docs/checker.md, "Cost").
#[test]
#[ignore = "a measurement: cargo test --test primitives checked_cost -- --ignored --nocapture"]
fn checked_cost_on_the_lessons() {
    use gridsync::Target;
    use std::time::Instant;
    let data: Vec<u8> = (0..1u32 << 16)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let t = Target::Sim;
    let calls: [(&str, &dyn Fn()); 5] = [
        ("race::run (10 × 16)", &|| {
            gridsync::race::run(&Target::Sim).unwrap();
        }),
        ("locks::add_one_mutex", &|| {
            gridsync::locks::add_one_mutex(&Target::Sim).unwrap();
        }),
        ("histogram (64 KiB)", &|| {
            gridsync::histogram::histogram(&Target::Sim, &data).unwrap();
        }),
        ("mbarrier::run", &|| {
            gridsync::mbarrier::run(&t, &gridsync::mbarrier::MbarrierOptions::for_target(&t))
                .unwrap();
        }),
        ("pipeline::run", &|| {
            gridsync::pipeline::run(&t, &gridsync::pipeline::PipelineOptions::for_target(&t))
                .unwrap();
        }),
    ];
    for (name, call) in calls {
        let t = Instant::now();
        call();
        let plain = t.elapsed();
        let t = Instant::now();
        let ((), report) = checked(STRICT, call);
        let with = t.elapsed();
        println!(
            "{name}: plain {plain:.2?}, checked {with:.2?} ({:.1}×)\n{report}\n",
            with.as_secs_f64() / plain.as_secs_f64()
        );
    }
}

/// The shared memory of [`mbarrier_handoff`]: the `mbarrier` (8 bytes), then 8 bytes of
/// padding, then 16 bytes a word or a bulk copy lands in (bulk copies are 16-byte aligned).
const HANDOFF_SHARED: u32 = 32;

/// One block of 32 threads meets at an `mbarrier` (every thread arrives; waits if `wait`);
/// before arriving, thread 0 writes the shared word at offset 16 — with a store, or by a bulk
/// copy of 16 bytes from global memory (`bulk`) that completes on the barrier — and after,
/// thread 1 loads it. Returns the report, the write's line and the load's.
fn mbarrier_handoff(bulk: bool, wait: bool) -> (Report, u32, u32) {
    use gpu::async_copy::cp_async_bulk_global_to_shared;
    use gpu::mbarrier::{BarrierScope, DEFAULT_TIMEOUT_NS, MBarrier};
    let cfg = LaunchConfig::linear(1, 32).with_shared_bytes(HANDOFF_SHARED);
    let source = Box::new([7u32; 4]);
    let src = source.as_ptr() as usize;
    let write = if bulk {
        line_of(THIS_RS, "cp_async_bulk_global_to_shared(dst")
    } else {
        line_of(THIS_RS, "word.store(7)")
    };
    let load = line_of(THIS_RS, "word.load()");
    let ((), report) = checked(Options::default(), || {
        gpu::sim::launch(&cfg, || {
            let t = gpu::index::thread_idx_x();
            // SAFETY: the launch gives each block `HANDOFF_SHARED` bytes, 16-byte aligned.
            let base = unsafe { gpu::shared::dynamic_shared::<u8>() };
            // SAFETY: the barrier's 8 bytes, used only through `MBarrier`.
            let bar = unsafe { MBarrier::from_generic(base.cast()) };
            let dst = base.wrapping_add(16);
            let word = Ptr::new(dst.cast::<u32>());
            if t == 0 {
                // SAFETY: initialized once, before any thread uses it (the barrier below).
                unsafe { bar.init(32) };
            }
            gpu::sync::sync_threads();
            // SAFETY: every thread arrives once at the initialized barrier; thread 0 expects
            // and copies exactly the 16 bytes it delivers.
            let phase = unsafe {
                if t == 0 && bulk {
                    let phase = bar.arrive_expect_tx(16, BarrierScope::Block);
                    cp_async_bulk_global_to_shared(dst, src as *const u8, 16, bar).unwrap();
                    phase
                } else {
                    if t == 0 {
                        word.store(7);
                    }
                    bar.arrive(BarrierScope::Block)
                }
            };
            if wait {
                // SAFETY: the token of this barrier's phase.
                unsafe { bar.wait(phase, BarrierScope::Block, DEFAULT_TIMEOUT_NS) }.unwrap();
            }
            if t == 1 {
                // SAFETY: inside the block's shared memory.
                let _ = unsafe { word.load() };
            }
        })
        .unwrap()
    });
    (report, write, load)
}

#[test]
fn a_word_read_after_the_mbarrier_wait_is_clean() {
    for bulk in [false, true] {
        let (report, ..) = mbarrier_handoff(bulk, true);
        assert!(report.is_clean(), "bulk copy {bulk}: {report}");
    }
}

#[test]
fn a_word_read_without_the_mbarrier_wait_is_a_data_race() {
    for bulk in [false, true] {
        let (report, write, load) = mbarrier_handoff(bulk, false);
        assert_eq!(
            found_in_space(&report),
            [(
                FindingKind::DataRace,
                write.min(load),
                write.max(load),
                Space::Shared
            )],
            "bulk copy {bulk}: {report}"
        );
    }
}

#[test]
fn a_barrier_reached_from_two_branches_is_divergence_with_both_lines() {
    let run = |split: bool| {
        let ((), report) = checked(Options::DEFAULT, || {
            gpu::sim::launch(&LaunchConfig::linear(2, 40), || barrier_in_branches(split)).unwrap();
        });
        report
    };
    assert!(run(false).is_clean(), "{}", run(false));
    let report = run(true);
    let (a, b) = (
        line_of(THIS_RS, "sync_threads(); // low"),
        line_of(THIS_RS, "sync_threads(); // high"),
    );
    let got = found(&report);
    assert!(
        got.iter()
            .any(|&(k, x, y, ..)| k == FindingKind::BarrierDivergence && (x, y) == (a, b)),
        "{report}"
    );
    assert!(
        report.to_string().contains("block barrier reached by"),
        "{report}"
    );
}

/// Every thread meets the block barrier once: from one call site, or (`split`) the low 16
/// threads of each block from one and the rest from another.
fn barrier_in_branches(split: bool) {
    use gpu::sync::sync_threads;
    if split && gpu::index::thread_idx_x() < 16 {
        sync_threads(); // low
    } else {
        sync_threads(); // high
    }
}

#[test]
fn shared_memory_read_before_any_write_is_an_uninitialized_read() {
    let run = |zero_first: bool| {
        let ((), report) = checked(Options::DEFAULT, || {
            let cfg = LaunchConfig::linear(2, 40).with_shared_bytes(64);
            gpu::sim::launch(&cfg, || sum_of_shared_words(zero_first)).unwrap();
        });
        report
    };
    let clean = run(true);
    assert!(clean.is_clean(), "{clean}");
    let report = run(false);
    let line = line_of(THIS_RS, "let v = unsafe { s.add(i).load() };");
    let uninit: Vec<_> = report.of_kind(FindingKind::UninitializedRead).collect();
    assert_eq!(uninit.len(), 1, "{report}");
    assert_eq!(uninit[0].second.site.line(), line, "{report}");
    assert_eq!(uninit[0].second.bytes.space, Space::Shared, "{report}");
    assert!(
        report
            .to_string()
            .contains("uninitialized read: plain load"),
        "{report}"
    );
}

/// Every thread reads the block's 16 shared words (after thread 0 zeroed them and the block
/// met, if `zero_first`; else straight away, reading what the hardware left there).
fn sum_of_shared_words(zero_first: bool) {
    // SAFETY: the launch gives each block 64 bytes of shared memory.
    let s = Ptr::new(unsafe { gpu::shared::dynamic_shared::<u32>() });
    if zero_first {
        if gpu::index::thread_idx_x() == 0 {
            for i in 0..16 {
                unsafe { s.add(i).store(0) };
            }
        }
        gpu::sync::sync_threads();
    }
    let mut sum = 0u32;
    for i in 0..16 {
        let v = unsafe { s.add(i).load() };
        sum = sum.wrapping_add(v);
    }
    std::hint::black_box(sum);
}

#[test]
fn an_access_past_a_simulator_buffer_is_out_of_bounds_with_its_line() {
    let run = |len: usize, touched: usize| {
        let buf = gridsync::Target::Sim.zeros::<u32>(len).unwrap();
        let p = buf.ptr() as usize;
        let ((), report) = checked(Options::DEFAULT, || {
            gpu::sim::launch(&LaunchConfig::linear(1, 1), || write_words(p, touched)).unwrap();
        });
        report
    };
    // Every word of a buffer of 10 (and of an empty one, none): nothing to report.
    assert!(run(10, 10).is_clean());
    assert!(run(0, 0).is_clean());
    // One word past the end: reported with the store's line, its offset and the buffer's size.
    let report = run(10, 11);
    let oob: Vec<_> = report.of_kind(FindingKind::OutOfBounds).collect();
    assert_eq!(oob.len(), 1, "{report}");
    assert_eq!(
        oob[0].second.site.line(),
        line_of(THIS_RS, "unsafe { x.add(i).store(i as u32) };"),
        "{report}"
    );
    assert!(
        report
            .to_string()
            .contains("bytes 40..44 of a buffer of 40 bytes"),
        "{report}"
    );
}

/// Writes `words` words from the start of the `u32`s at `p`.
fn write_words(p: usize, words: usize) {
    let x = Ptr::new(p as *mut u32);
    for i in 0..words {
        // SAFETY: the buffer holds `words` words, or (on purpose) its guard zone takes the last.
        unsafe { x.add(i).store(i as u32) };
    }
}

#[test]
fn a_global_access_to_shared_memory_is_a_wrong_space_with_its_line() {
    let run = |into_shared: bool| {
        let buf = gridsync::Target::Sim.zeros::<u32>(64).unwrap();
        let p = buf.ptr() as usize;
        let ((), report) = checked(Options::DEFAULT, || {
            let cfg = LaunchConfig::linear(2, 32).with_shared_bytes(128);
            gpu::sim::launch(&cfg, || copy_through_global(p, into_shared)).unwrap();
        });
        report
    };
    // `st.global`, `ld.global` and `ld.global.nc` on a global buffer: nothing to report.
    let clean = run(false);
    assert!(clean.is_clean(), "{clean}");
    // The same store and loads on the block's shared memory: each is a wrong space, at its line,
    // once for every thread of the two blocks.
    let report = run(true);
    let wrong: Vec<_> = report.of_kind(FindingKind::WrongSpace).collect();
    let lines: Vec<_> = wrong.iter().map(|f| f.second.site.line()).collect();
    assert_eq!(
        lines,
        [
            line_of(THIS_RS, "unsafe { gpu::global::stg(at, i) };"),
            line_of(THIS_RS, "let v = unsafe { gpu::global::ldg_plain(at) };"),
            line_of(THIS_RS, "let w = unsafe { gpu::readonly::ldg(at) };"),
        ],
        "{report}"
    );
    assert!(wrong.iter().all(|f| f.count == 64 && f.first == f.second));
    assert_eq!(wrong[0].second.bytes.space, Space::Shared, "{report}");
    assert!(
        report.to_string().contains("wrong space: plain store"),
        "{report}"
    );
}

/// Each thread stores its index with `st.global`, loads it back with `ld.global`, then with
/// `ld.global.nc`: in the `u32`s at `p` (global, a word per thread of both blocks), or
/// (`into_shared`, wrongly) in its block's shared memory.
fn copy_through_global(p: usize, into_shared: bool) {
    let i = gpu::index::thread_idx_x();
    let at = if into_shared {
        // SAFETY: the launch gives each block 128 bytes of shared memory, a word per thread.
        unsafe { gpu::shared::dynamic_shared::<u32>().add(i as usize) }
    } else {
        let global = i + gpu::index::block_dim_x() * gpu::index::block_idx_x();
        (p as *mut u32).wrapping_add(global as usize)
    };
    // SAFETY (the three): `at` is this thread's word alone (in global memory, or on purpose
    // not), which no other thread writes during the launch.
    unsafe { gpu::global::stg(at, i) };
    let v = unsafe { gpu::global::ldg_plain(at) };
    let w = unsafe { gpu::readonly::ldg(at) };
    std::hint::black_box((v, w));
}

/// The first line of this file that holds `text` (1-based).
fn first_line_of(text: &str) -> u32 {
    THIS_RS
        .lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("no line with {text}")) as u32
        + 1
}

/// One block of `threads` at an `mbarrier` that expects `expected` arrivals: every thread
/// arrives twice at once (`arrive_count(2)`), then waits by parity for the phase — and, with
/// `again`, waits by parity 0 once more without moving the parity on. Returns the report and
/// the run's error, if it had one.
fn mbarrier_misuse(threads: u32, expected: u32, again: bool) -> (Report, Option<String>) {
    use gpu::mbarrier::{BarrierScope, MBarrier};
    let cfg = LaunchConfig::linear(1, threads).with_shared_bytes(HANDOFF_SHARED);
    let (ran, report) = checked(Options::default(), || {
        gpu::sim::launch(&cfg, || {
            let t = gpu::index::thread_idx_x();
            // SAFETY: the launch gives each block `HANDOFF_SHARED` bytes, 8-byte aligned.
            let base = unsafe { gpu::shared::dynamic_shared::<u64>() };
            // SAFETY: the barrier's 8 bytes, used only through `MBarrier`.
            let bar = unsafe { MBarrier::from_generic(base) };
            if t == 0 {
                // SAFETY: initialized once, before any thread uses it (the barrier below).
                unsafe { bar.init(expected) };
            }
            gpu::sync::sync_threads();
            // SAFETY: the initialized barrier; more arrivals than it expects are the point.
            unsafe {
                let _ = bar.arrive_count(2, BarrierScope::Block); // (the arrivals)
                while !bar.try_wait_parity(0, BarrierScope::Block) {} // (the wait)
                if again {
                    while !bar.try_wait_parity(0, BarrierScope::Block) {} // (the wait again)
                }
            }
        })
    });
    (report, ran.err().map(|e| e.to_string()))
}

#[test]
fn an_arrival_beyond_the_count_is_a_finding_with_its_line() {
    // Two threads arriving twice each at a barrier that expects three: the second thread's
    // second arrival is one too many.
    let (report, error) = mbarrier_misuse(2, 3, false);
    assert_eq!(error, None, "the checked launch goes on: {report}");
    let beyond: Vec<_> = report.of_kind(FindingKind::ArrivalBeyondCount).collect();
    assert_eq!(beyond.len(), 1, "{report}");
    assert_eq!(
        beyond[0].second.site.line(),
        first_line_of("(the arrivals)"),
        "{report}"
    );
    assert_eq!(beyond[0].second.site.file(), file!(), "{report}");
    // As many arrivals as expected: nothing.
    let (report, error) = mbarrier_misuse(2, 4, false);
    assert!(report.is_clean() && error.is_none(), "{report}");
}

#[test]
fn an_arrival_beyond_the_count_outside_the_checker_fails_the_launch() {
    let cfg = LaunchConfig::linear(1, 2).with_shared_bytes(HANDOFF_SHARED);
    let ran = gpu::sim::launch(&cfg, || {
        use gpu::mbarrier::{BarrierScope, MBarrier};
        // SAFETY: as in `mbarrier_misuse`.
        unsafe {
            let bar = MBarrier::from_generic(gpu::shared::dynamic_shared::<u64>());
            if gpu::index::thread_idx_x() == 0 {
                bar.init(3);
            }
            gpu::sync::sync_threads();
            let _ = bar.arrive_count(2, BarrierScope::Block);
        }
    });
    let e = ran
        .expect_err("four arrivals at a barrier that expects three")
        .to_string();
    assert!(e.contains("arrivals pending"), "{e}");
}

#[test]
fn a_second_wait_on_a_phase_already_waited_for_is_a_stale_parity() {
    let (report, _) = mbarrier_misuse(4, 8, true);
    let stale: Vec<_> = report.of_kind(FindingKind::StaleParity).collect();
    assert_eq!(stale.len(), 1, "{report}");
    let lines = (stale[0].first.site.line(), stale[0].second.site.line());
    assert_eq!(
        lines,
        (
            first_line_of("(the wait)"),
            first_line_of("(the wait again)")
        ),
        "{report}"
    );
    let (report, _) = mbarrier_misuse(4, 8, false);
    assert!(report.is_clean(), "one wait per phase: {report}");
}
