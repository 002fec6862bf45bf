//! The tour: `gridsync` with no arguments runs every topic once, small and quick, in the reading
//! order, each result checked against the CPU, and ends with a one-screen summary and the
//! commands that go deeper.
//!
//! Each stop calls the topic's own library function (the one its subcommand calls) on a small
//! input, so the tour checks what the subcommands check; a stop that fails is reported in the
//! summary and the others still run.

use super::basics::{print_info, print_race};
use super::output::{print_json, progress};
use super::table::{Table, fmt_opt};
use gridsync::{Error, Gpu, Result, Target};
use serde::Serialize;
use std::time::Instant;

/// Input sizes of the stops: large enough on a GPU for the kernel times to mean something,
/// small enough on the simulator (one OS thread per GPU thread) to finish in seconds.
struct Sizes {
    floats: usize,
    text_bytes: usize,
    stream_floats: usize,
    repeats: u32,
    barrier_iterations: u32,
    atoms: usize,
}

const GPU_SIZES: Sizes = Sizes {
    floats: 1 << 24,
    text_bytes: gridsync::inputs::text::DEFAULT_TEXT_BYTES,
    stream_floats: 1 << 22,
    repeats: 3,
    barrier_iterations: gridsync::barrier::SOURCE_ITERATIONS,
    atoms: 22_464,
};

const SIM_SIZES: Sizes = Sizes {
    floats: 2 * 1024 + 7,
    text_bytes: 20_000,
    stream_floats: 256 + 7,
    repeats: 1,
    barrier_iterations: 10,
    atoms: 500,
};

/// One stop of the tour, as the summary shows it.
#[derive(Serialize)]
struct Stop {
    /// The topic, as its subcommand is named.
    topic: &'static str,
    /// The headline result, checked against the CPU; or why the stop failed.
    result: String,
    /// Whether the stop's checks passed.
    ok: bool,
    /// The fastest checked kernel and its event-timed median in milliseconds (GPU only).
    fastest: Option<(String, f64)>,
    /// Wall-clock seconds of the whole stop, set-up and CPU checks included.
    wall_s: f64,
    /// The command that goes deeper.
    deeper: &'static str,
}

#[derive(Serialize)]
struct Tour {
    gpu: Option<gridsync::DeviceInfo>,
    no_gpu_reason: Option<String>,
    stops: Vec<Stop>,
}

/// What a stop's body returns: the headline, and the fastest kernel.
type Headline = (String, Option<(String, f64)>);

/// The fastest of `(name, ms)` pairs; `None` where nothing was timed (the simulator).
fn fastest<'a>(runs: impl IntoIterator<Item = (&'a str, Option<f64>)>) -> Option<(String, f64)> {
    runs.into_iter()
        .filter_map(|(name, ms)| ms.map(|ms| (name.to_string(), ms)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// Runs the tour: every stop once, on the GPU or, without one, the simulator; then the
/// summary, and an error if a stop failed.
pub fn tour(cli: &crate::Cli) -> Result<()> {
    let (target, reason) = open_target(cli)?;
    let text = !cli.json;
    if text {
        announce(&target, reason.as_deref());
    }
    let sizes = if target.is_sim() {
        &SIM_SIZES
    } else {
        &GPU_SIZES
    };
    let done: Vec<Stop> = stops()
        .into_iter()
        .map(|(topic, deeper, body)| run_stop(topic, deeper, body, &target, sizes, text))
        .collect();
    let failed = done.iter().filter(|s| !s.ok).count();
    if cli.json {
        let gpu = match &target {
            Target::Gpu(g) => Some(g.info().clone()),
            Target::Sim => None,
        };
        print_json(&Tour {
            gpu,
            no_gpu_reason: reason,
            stops: done,
        })?;
    } else {
        print_summary(&target, &done);
    }
    if failed > 0 {
        return Err(Error::Mismatch(format!(
            "{failed} of the tour's stops failed (see above)"
        )));
    }
    Ok(())
}

/// The GPU asked for, or the simulator with why: `--simulate`, or no usable GPU.
fn open_target(cli: &crate::Cli) -> Result<(Target, Option<String>)> {
    if cli.simulate {
        return Ok((Target::Sim, Some("--simulate was given".to_string())));
    }
    match Gpu::new(cli.device.unwrap_or(0)) {
        Ok(gpu) => Ok((Target::Gpu(gpu), None)),
        Err(e @ (Error::NoGpu(_) | Error::Unsupported(_))) => {
            Ok((Target::Sim, Some(e.to_string())))
        }
        Err(e) => Err(e),
    }
}

/// Says what the tour runs on: the GPU's properties, or why it runs on the simulator.
fn announce(target: &Target, reason: Option<&str>) {
    match (target, reason) {
        (Target::Gpu(g), _) => print_info(g),
        (Target::Sim, Some(why)) => {
            println!("{why}: running the tour on the CPU simulator (kernels run as OS threads).")
        }
        (Target::Sim, None) => {}
    }
}

/// A stop's body: it runs the topic on the target at the sizes, printing if asked.
type Body = Box<dyn FnOnce(&Target, &Sizes, bool) -> Result<Headline>>;

/// The stops in reading order: topic, the command that goes deeper, the body.
fn stops() -> Vec<(&'static str, &'static str, Body)> {
    vec![
        ("race", "gridsync race", Box::new(race)),
        ("atomics", "gridsync atomics", Box::new(atomics)),
        (
            "locks",
            "gridsync locks; gridsync bench locks",
            Box::new(locks),
        ),
        (
            "count-above",
            "gridsync count-above --len N",
            Box::new(count_above),
        ),
        ("dot", "gridsync dot --len N", Box::new(dot)),
        (
            "reduce",
            "gridsync reduce; gridsync bench reduce",
            Box::new(reduce),
        ),
        (
            "histogram",
            "gridsync histogram --sweep --plot F.svg",
            Box::new(histogram),
        ),
        (
            "streams",
            "gridsync streams --plot F.svg",
            Box::new(streams),
        ),
        (
            "barrier",
            "gridsync barrier --sweep --plot F.svg; gridsync bench barrier",
            Box::new(barrier),
        ),
        (
            "mbarrier",
            "gridsync mbarrier; gridsync bench cluster; gridsync histogram --bins 65536",
            Box::new(mbarrier),
        ),
        (
            "pipeline",
            "gridsync pipeline; gridsync bench histogram",
            Box::new(pipeline),
        ),
        (
            "neighbor",
            "gridsync neighbor --plot F.svg; gridsync bench neighbor",
            Box::new(neighbor),
        ),
        (
            "multi",
            "gridsync multi lock|barrier; gridsync bench multi",
            Box::new(|t: &Target, sizes: &Sizes, text| {
                super::multi::tour_stop(t.is_sim(), sizes.floats, text)
            }),
        ),
        (
            "litmus",
            "gridsync litmus --plot F.svg; gridsync --simulate litmus --weak",
            Box::new(litmus),
        ),
    ]
}

/// Runs one stop, timed; a failure becomes the stop's result instead of ending the tour.
fn run_stop(
    topic: &'static str,
    deeper: &'static str,
    body: Body,
    target: &Target,
    sizes: &Sizes,
    text: bool,
) -> Stop {
    if text {
        println!("\n── {topic} ──");
    }
    let start = Instant::now();
    let outcome = body(target, sizes, text);
    let wall_s = start.elapsed().as_secs_f64();
    let (result, ok, fastest) = match outcome {
        Ok((result, fastest)) => (result, true, fastest),
        Err(e) => (format!("FAILED: {e}"), false, None),
    };
    if text && !ok {
        println!("  {result}");
    }
    if text && let Some((name, ms)) = &fastest {
        println!("  fastest checked kernel: {name}, {ms:.3} ms");
    }
    Stop {
        topic,
        result,
        ok,
        fastest,
        wall_s,
        deeper,
    }
}

fn print_summary(target: &Target, stops: &[Stop]) {
    println!("\nsummary on the {}", target.describe());
    let t = Table::new(
        "  {topic:<12} {checked against the CPU:<46} {fastest ms:>10} {wall s:>7.2}  {go deeper}",
    );
    t.header();
    for s in stops {
        let ms = fmt_opt(s.fastest.as_ref().map(|(_, ms)| *ms), 3);
        let mut result = s.result.clone();
        if result.chars().count() > 46 {
            result = result.chars().take(45).collect::<String>() + "…";
        }
        t.row(&[&s.topic, &result, &ms, &s.wall_s, &s.deeper]);
    }
    println!(
        "\n  Every topic takes --json, --device N and --simulate; `gridsync bench …` measures \
         against the copy roofline; `gridsync doctor` checks this machine; the README gives the \
         reading order."
    );
}

fn race(target: &Target, _: &Sizes, text: bool) -> Result<Headline> {
    let r = gridsync::race::run(target)?;
    if text {
        print_race(&r);
    }
    if r.atomic != r.expected {
        return Err(Error::Mismatch(format!(
            "add_one_atomic gave {}, not {}",
            r.atomic, r.expected
        )));
    }
    Ok((
        format!(
            "racy x[0] = {}, atomic x[0] = {} of {}",
            r.racy, r.atomic, r.expected
        ),
        None,
    ))
}

fn atomics(target: &Target, _: &Sizes, text: bool) -> Result<Headline> {
    use gridsync::atomics::{CheckShape, demo::SIM_TABLE_SHAPE, table};
    let shape = match target {
        Target::Gpu(g) => CheckShape::new(g.info().sm_count, 128, 1),
        Target::Sim => SIM_TABLE_SHAPE,
    };
    let rows = table::table(target, &shape, 1, progress(text, "atomics"))?;
    let (passed, cases) = rows.iter().fold((0, 0), |(p, n), r| {
        let (rp, rn) = r.totals();
        (p + rp, n + rn)
    });
    if let Some(f) = rows.iter().find_map(|r| r.first_failure.as_ref()) {
        return Err(Error::Mismatch(format!(
            "{passed} of {cases} atomic cases matched the model; first failure: {f}"
        )));
    }
    if text {
        println!(
            "  {} CUDA atomic functions × types × block/device/system scope × 4 orderings, each \
             checked against a sequential model.",
            rows.len()
        );
    }
    Ok((
        format!("{passed} of {cases} atomic cases match the model"),
        None,
    ))
}

fn locks(target: &Target, _: &Sizes, text: bool) -> Result<Headline> {
    use gridsync::locks::{Shape, Variant, add_one_mutex, run_variant};
    let source = add_one_mutex(target)?;
    if source != 160 {
        return Err(Error::Mismatch(format!(
            "add_one_mutex gave {source}, not 160"
        )));
    }
    let shape = Shape {
        blocks: 4,
        threads: 128,
    };
    let run = run_variant(
        target,
        Variant::Mutex,
        shape,
        4,
        gridsync::MutexBounds::default(),
    )?;
    if text {
        println!("  add_one_mutex at 10×16 (the Numba tutorial's lock): x[0] = {source}");
        println!(
            "  Mutex at {shape}, 4 critical sections per thread: counter {} of {}",
            run.counter, run.expected
        );
    }
    Ok((
        format!(
            "Mutex {shape}×4: {} of {} increments",
            run.counter, run.expected
        ),
        run.ms.map(|ms| (Variant::Mutex.kernel().to_string(), ms)),
    ))
}

fn count_above(target: &Target, sizes: &Sizes, text: bool) -> Result<Headline> {
    use gridsync::count_above::{CountOptions, default_input, run};
    let data = default_input(sizes.floats);
    let opts = CountOptions::default();
    let r = run(
        target,
        &data,
        "generated",
        &opts,
        progress(text, "count-above"),
    )?;
    if text {
        println!(
            "  {} floats, threshold {}: every kernel counted {} (the CPU's count)",
            r.len, r.threshold, r.expected
        );
    }
    Ok((
        format!("{} of {} above {}", r.expected, r.len, r.threshold),
        fastest(r.runs.iter().map(|k| (k.name, k.launch.ms))),
    ))
}

fn dot(target: &Target, sizes: &Sizes, text: bool) -> Result<Headline> {
    let (a, b) = gridsync::dot::random_data(sizes.floats, 1);
    let r = gridsync::dot::run(target, &a, &b, "random", progress(text, "dot"))?;
    let worst = r.runs.iter().map(|k| k.rel_error).fold(0.0, f64::max);
    if text {
        println!(
            "  {} elements: every kernel within {worst:.1e} of the float64 dot {:.6}",
            r.len, r.cpu.dot
        );
    }
    Ok((
        format!("{} kernels, worst rel. error {worst:.1e}", r.runs.len()),
        fastest(r.runs.iter().map(|k| (k.name, k.launch.ms))),
    ))
}

fn reduce(target: &Target, sizes: &Sizes, text: bool) -> Result<Headline> {
    use gridsync::reduce::{ReduceOptions, book_input, run};
    let data = book_input(sizes.floats);
    let opts = ReduceOptions {
        repeats: sizes.repeats,
        types: !target.is_sim(),
        ..ReduceOptions::default()
    };
    let r = run(target, &data, "book", &opts, progress(text, "reduce"))?;
    let worst = r.runs.iter().map(|k| k.rel_error).fold(0.0, f64::max);
    if text {
        println!(
            "  Σ of {} × 1.23 (the CUDA book's input) = {:.4} in float64; worst kernel rel. error \
             {worst:.1e}",
            r.len, r.expected
        );
    }
    Ok((
        format!("Σ {} × 1.23, worst rel. error {worst:.1e}", r.len),
        fastest(r.runs.iter().map(|k| (k.name, k.launch.ms))),
    ))
}

fn histogram(target: &Target, sizes: &Sizes, text: bool) -> Result<Headline> {
    use gridsync::inputs::text::{DEFAULT_TEXT_SEED, english_text};
    use gridsync_cli::demos::histogram::{HistogramOptions, run};
    let data = english_text(sizes.text_bytes, DEFAULT_TEXT_SEED);
    let r = run(
        target,
        &data,
        "English-like text",
        &HistogramOptions::default(),
        progress(text, "histogram"),
    )?;
    let mut letters = r.letters.lowercase.clone();
    letters.sort_by_key(|&(c, n)| (std::cmp::Reverse(n), c));
    let top: String = letters.iter().take(4).map(|(c, _)| *c).collect();
    if text {
        println!(
            "  {} bytes of text, {} bins: every kernel's histogram equals the CPU's; most common \
             letters {top}",
            r.len,
            r.bins.count()
        );
    }
    Ok((
        format!("{} bytes, {} kernels exact", r.len, r.runs.len()),
        fastest(r.runs.iter().map(|k| (k.name, k.launch.ms))),
    ))
}

fn streams(target: &Target, sizes: &Sizes, text: bool) -> Result<Headline> {
    use gridsync_cli::demos::streams::{ExperimentOptions, run};
    let opts = ExperimentOptions {
        len: sizes.stream_floats,
        repeats: sizes.repeats,
        ..ExperimentOptions::default()
    };
    let r = run(target, &opts, progress(text, "streams"))?;
    let total = |streams: usize| {
        r.runs
            .iter()
            .find(|run| run.options.streams == streams)
            .and_then(|run| run.total_ms.as_ref().map(|s| s.median))
    };
    let many = r
        .runs
        .iter()
        .map(|run| run.options.streams)
        .max()
        .unwrap_or(1);
    let headline = match (total(many), total(1)) {
        (Some(m), Some(o)) => format!("{many} streams {m:.2} ms, 1 stream {o:.2} ms"),
        _ => format!(
            "{} arrays of {} normalized, sums checked",
            opts.arrays, opts.len
        ),
    };
    if text {
        println!(
            "  {} arrays of {} floats, a ← a / Σa, on {many} streams and on one; every array \
             checked against the float64 CPU result",
            opts.arrays, opts.len
        );
    }
    Ok((headline, None))
}

fn barrier(target: &Target, sizes: &Sizes, text: bool) -> Result<Headline> {
    use gridsync::barrier::{BarrierOptions, Variant, run};
    let opts = BarrierOptions {
        iterations: sizes.barrier_iterations,
        repeats: sizes.repeats,
        ..BarrierOptions::default()
    };
    let r = run(target, &opts, progress(text, "barrier"))?;
    let us = |v: Variant| {
        r.runs
            .iter()
            .find(|run| run.variant == v)
            .and_then(|run| run.us_per_iteration.as_ref().map(|s| s.median))
    };
    let wrong = |v: Variant| {
        r.runs
            .iter()
            .find(|run| run.variant == v)
            .map_or(0, |run| run.wrong_elements)
    };
    if text {
        println!(
            "  X→P→X, W = {}, {} iterations at {}×{}: many launches and one launch with GridBarrier \
             give the CPU's bits; without a barrier {} of {} values \
             came out wrong, with sync_threads only {}",
            opts.len,
            opts.iterations,
            opts.blocks,
            opts.threads,
            wrong(Variant::NoBarrier),
            opts.len,
            wrong(Variant::SyncThreads)
        );
    }
    let right = r
        .runs
        .iter()
        .filter(|v| v.must_be_correct && v.matches_cpu)
        .count();
    let headline = match (us(Variant::ManyLaunches), us(Variant::GridBarrier)) {
        (Some(many), Some(one)) => format!("many launches {many:.2} µs/it, one {one:.2} µs/it"),
        _ => format!(
            "{right} barriers give the CPU's bits; none: {} wrong",
            wrong(Variant::NoBarrier)
        ),
    };
    let fastest = us(Variant::GridBarrier).map(|us| {
        (
            "xpx_grid_barrier".to_string(),
            us * 1e-3 * opts.iterations as f64,
        )
    });
    Ok((headline, fastest))
}

fn mbarrier(target: &Target, _sizes: &Sizes, text: bool) -> Result<Headline> {
    use gridsync::mbarrier::{MbarrierOptions, RelayKernel, run};
    let opts = MbarrierOptions::for_target(target);
    let r = match run(target, &opts) {
        Err(Error::Unsupported(why)) => return Ok((format!("skipped: {why}"), None)),
        r => r?,
    };
    let stale = |k: RelayKernel| {
        r.runs
            .iter()
            .find(|x| x.kernel == k)
            .map_or(0, |x| x.stale_reads)
    };
    if text {
        println!(
            "  the relay, {} rounds at {}×{}: with sync_threads and split into arrive/work/wait no \
             stale read; reading before the wait {} stale reads, a stuck parity {}; waiting \
             before arriving timed out (bounded) instead of hanging",
            r.rounds,
            r.blocks,
            r.threads_per_block,
            stale(RelayKernel::NoWait),
            stale(RelayKernel::StuckParity)
        );
    }
    let headline = format!(
        "split barrier correct; {} stale reads without the wait; the deadlock bounded",
        stale(RelayKernel::NoWait)
    );
    let fastest = fastest(r.runs.iter().map(|k| (k.name, k.ms)));
    Ok((headline, fastest))
}

fn pipeline(target: &Target, _sizes: &Sizes, text: bool) -> Result<Headline> {
    use gridsync::pipeline::{PipelineKernel, PipelineOptions, run};
    let opts = PipelineOptions::for_target(target);
    let r = match run(target, &opts) {
        Err(Error::Unsupported(why)) => return Ok((format!("skipped: {why}"), None)),
        r => r?,
    };
    let wrong = |k: PipelineKernel| {
        r.runs
            .iter()
            .find(|x| x.kernel == k)
            .map_or(0, |x| x.wrong_words)
    };
    if text {
        println!(
            "  {} tiles through a two-stage ring of bulk copies per block: with both waits every \
             word right; without the full wait {} wrong words, without the empty wait {}",
            r.tiles,
            wrong(PipelineKernel::NoFullWait),
            wrong(PipelineKernel::NoEmptyWait)
        );
    }
    let headline = format!(
        "pipeline correct; {} and {} wrong words without the full and the empty wait",
        wrong(PipelineKernel::NoFullWait),
        wrong(PipelineKernel::NoEmptyWait)
    );
    let fastest = fastest(r.runs.iter().map(|k| (k.name, k.ms)));
    Ok((headline, fastest))
}

/// MP with relaxed accesses and with release/acquire: on a GPU across SMs under stress, on the
/// simulator on its weak memory; and on the simulator the lock without fences on the weak
/// memory, which loses updates.
fn litmus(target: &Target, _sizes: &Sizes, text: bool) -> Result<Headline> {
    use gridsync_cli::litmus::{LitmusOptions, Placement, Test, Variant, run};
    let sim = target.is_sim();
    let opts = LitmusOptions {
        tests: vec![Test::MP, Test::MpLock],
        variants: vec![Variant::Relaxed, Variant::ReleaseAcquire],
        placements: vec![Placement::DifferentSms],
        iterations: if sim { 20_000 } else { 2_000_000 },
        seconds: 30.0,
        weak: sim,
        ..LitmusOptions::for_target(target)
    };
    let r = run(target, &opts, |_| {})?;
    let weak = |t: Test, v: Variant| {
        r.results
            .iter()
            .find(|x| x.test == t && x.variant == v)
            .map_or((0, 0), |x| (x.weak, x.instances))
    };
    let (mp, n) = weak(Test::MP, Variant::Relaxed);
    let (lock, _) = weak(Test::MpLock, Variant::Relaxed);
    let (fenced, _) = weak(Test::MP, Variant::ReleaseAcquire);
    let memory = if sim {
        "the simulator's weak memory"
    } else {
        "different SMs, under stress"
    };
    let mut headline = format!(
        "MP relaxed: flag seen, data stale {mp} of {n} ({memory}); release/acquire {fenced}; \
         MP+lock {lock}; {} forbidden",
        r.forbidden
    );
    if sim {
        // The lock lesson's kernel itself, on the weak memory: it loses updates.
        use gridsync::locks::{Shape, Variant as Lock, run_variant};
        let shape = Shape {
            blocks: 2,
            threads: 8,
        };
        let (lost, _) = gpu::sim::weak::scoped(1, || {
            run_variant(target, Lock::Unfenced, shape, 10, Default::default()).map(|x| x.lost())
        });
        headline += &format!("; lock_unfenced lost {} of 160 updates", lost?);
    }
    if text {
        println!("  {headline}");
    }
    if r.forbidden > 0 {
        return Err(Error::Mismatch(format!(
            "{} forbidden litmus outcomes",
            r.forbidden
        )));
    }
    Ok((headline, None))
}

fn neighbor(target: &Target, sizes: &Sizes, text: bool) -> Result<Headline> {
    use gridsync::neighbor::{NeighborOptions, graphene, run};
    let atoms = graphene::graphene(sizes.atoms, 1)?;
    let mut bar = progress(text, "neighbor");
    let (r, _) = run(
        target,
        &atoms,
        "graphene",
        &NeighborOptions::default(),
        &mut bar,
    )?;
    let three = r.histogram.get(3).copied().unwrap_or(0);
    if text {
        println!(
            "  a graphene sheet of {} atoms: {} bonds below {} Å, {three} atoms with 3 neighbors; \
             every kernel's lists equal the CPU's{}",
            r.atoms,
            r.entries / 2,
            r.cutoff,
            match &r.mistake {
                Some(c) if c.atoms > 0 =>
                    format!(", and the book's mistake corrupted {} lists", c.atoms),
                _ => String::new(),
            }
        );
    }
    let fastest = r
        .runs
        .iter()
        .filter(|k| k.equal && k.layout == "CSR")
        .find_map(|k| k.ms.map(|ms| (k.name.clone(), ms)));
    let headline = format!(
        "{} atoms, {} bonds, lists equal the CPU's",
        r.atoms,
        r.entries / 2
    );
    Ok((headline, fastest))
}
