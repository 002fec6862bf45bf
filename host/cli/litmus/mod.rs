//! `gridsync litmus`: the memory model's litmus tests, on the GPU under stress or on the
//! simulator's memory.

mod primitives;

use super::output::{parse_option, print_json_or};
use clap::Args;
use gridsync::litmus::{
    LitmusOptions, LitmusReport, LitmusResult, Placement, Test, Variant, Verdict, model, run_on,
};
use gridsync::multi::{DeviceList, DeviceSet};
use gridsync::{Error, Result, Target};
use std::io::{IsTerminal, Write};

#[derive(Args)]
pub struct LitmusArgs {
    /// A test to run (repeatable): MP, SB, LB, CoRR, CoWW, S, R, 2+2W, WRC, IRIW [default: all].
    #[arg(long = "test", value_name = "NAME", value_parser = parse_option::<Test>)]
    tests: Vec<Test>,
    /// A variant (repeatable): plain, volatile, relaxed, rel-acq, acq_rel.cta|gpu|sys,
    /// sc.cta|gpu|sys [default: all].
    #[arg(long = "variant", value_name = "NAME", value_parser = parse_option::<Variant>)]
    variants: Vec<Variant>,
    /// Where the threads of an instance run (repeatable, GPU): warp, block, sm, sms, gpus
    /// (needs --devices with two or more GPUs) [default: all that the devices allow].
    #[arg(long = "placement", value_name = "NAME", value_parser = parse_option::<Placement>)]
    placements: Vec<Placement>,
    /// Instances (GPU) or seeded runs (simulator) per combination [default: 10 000 000 on a
    /// GPU, 100 000 on the simulator].
    #[arg(long, value_name = "N")]
    iterations: Option<u64>,
    /// A bound on the whole run, shared among the combinations [default: 600 on a GPU, 60 on
    /// the simulator].
    #[arg(long, value_name = "S")]
    seconds: Option<f64>,
    /// Seeds the permutations (GPU) and the runs (simulator).
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// With --simulate: the weak memory, which may show what the PTX model allows (stale
    /// loads, stores out of order) instead of the sequentially consistent one.
    #[arg(long)]
    weak: bool,
    /// With --simulate and one --test and --variant: run RUN of --seed again and tell it step
    /// by step (the report's `first_weak_run` names one that gave the weak outcome).
    #[arg(long, value_name = "RUN")]
    replay: Option<u64>,
    /// Loads and stores each stress thread makes per round (GPU; 0: no stress).
    #[arg(long, value_name = "N")]
    stress_iters: Option<u32>,
    /// Lines of 128 bytes the stress threads hammer (GPU; a power of two).
    #[arg(long, value_name = "N")]
    stress_lines: Option<u32>,
    /// Words between two location slots (GPU; 32: one line each).
    #[arg(long, value_name = "WORDS")]
    stride: Option<u32>,
    /// Instead of the tests: gridsync's locks and barriers under stress, each guarding plain
    /// memory checked on every use, and a variant of each with its ordering removed.
    #[arg(long)]
    primitives: bool,
    /// With --primitives: acquisitions per lock [default: 10⁸ on a GPU, 320 on the simulator].
    #[arg(long, value_name = "N")]
    acquisitions: Option<u64>,
    /// With --primitives: rounds per barrier [default: 10⁷ on a GPU, 30 on the simulator].
    #[arg(long, value_name = "N")]
    rounds: Option<u64>,
    /// The GPUs: all, or ordinals such as 0,1. With two or more, the placement gpus runs
    /// across them (and --primitives runs the system-scope primitives across them); the
    /// other placements run on the first [default: --device alone].
    #[arg(long, value_name = "LIST", value_parser = parse_option::<DeviceList>)]
    devices: Option<DeviceList>,
    /// Print every outcome of every combination, not only the weak outcome's count.
    #[arg(long)]
    outcomes: bool,
    /// Read a report written by --json instead of running (then print it, or --plot it).
    #[arg(long, value_name = "FILE.json")]
    report: Option<std::path::PathBuf>,
    /// Write the weak outcome's rate per test, variant and placement as an SVG heat map.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<std::path::PathBuf>,
}

/// `given`, or `all` when nothing was given.
fn or_all<T: Clone>(given: &[T], all: Vec<T>) -> Vec<T> {
    if given.is_empty() {
        all
    } else {
        given.to_vec()
    }
}

pub fn command(device: u32, simulate: bool, args: &LitmusArgs, json: bool) -> Result<()> {
    if let Some(file) = &args.report {
        return show_saved(file, args, json);
    }
    let (set, one);
    let targets: &[Target] = match &args.devices {
        Some(list) if !simulate => {
            set = DeviceSet::open(list, false)?;
            set.targets()
        }
        Some(_) => {
            return Err(Error::InvalidInput(
                "--devices chooses GPUs: the simulator runs the tests' programs, without \
                 placements"
                    .into(),
            ));
        }
        None => {
            one = [Target::open(device, simulate)?];
            &one
        }
    };
    let target = &targets[0];
    if args.weak && !target.is_sim() {
        return Err(Error::InvalidInput(
            "--weak chooses the simulator's memory: use it with --simulate".into(),
        ));
    }
    let mut defaults = LitmusOptions::for_target(target);
    if targets.len() > 1 {
        defaults.placements.push(Placement::DifferentGpus);
    }
    let opts = LitmusOptions {
        tests: or_all(&args.tests, defaults.tests.clone()),
        variants: or_all(&args.variants, defaults.variants.clone()),
        placements: or_all(&args.placements, defaults.placements.clone()),
        iterations: args.iterations.unwrap_or(defaults.iterations),
        seconds: args.seconds.unwrap_or(defaults.seconds),
        seed: args.seed.unwrap_or(defaults.seed),
        weak: args.weak,
        stress: gridsync::litmus::Stress {
            iters: args.stress_iters.unwrap_or(defaults.stress.iters),
            lines: args.stress_lines.unwrap_or(defaults.stress.lines),
            stride_words: args.stride.unwrap_or(defaults.stress.stride_words),
        },
    };
    if let Some(path) = &args.plot {
        gridsync::plot::check_svg_path(path)?;
    }
    if args.primitives {
        return primitives::command(targets, args, json);
    }
    if let Some(run_no) = args.replay {
        return replay(target, &opts, run_no, json);
    }
    let show = !json && std::io::stderr().is_terminal();
    let total = opts.tests.len() * opts.variants.len();
    let mut done = 0;
    let report = run_on(targets, &opts, |r| {
        done += 1;
        if show {
            eprint!("\rlitmus: {} {} {}", r.name, r.variant.name(), placement(r));
            eprint!(
                " ({done} combinations of up to {})\x1b[K",
                total * opts.placements.len()
            );
            let _ = std::io::stderr().flush();
        }
    })?;
    if show {
        eprint!("\r\x1b[K");
    }
    if let Some(path) = &args.plot {
        gridsync::plot::write_svg(path, &report.plot())?;
    }
    print_json_or(json, &report, |r| print_report(r, args.outcomes))?;
    if report.passed() {
        Ok(())
    } else {
        Err(Error::Mismatch(format!(
            "{} forbidden outcomes observed: a bug in the test, or a finding about the hardware",
            report.forbidden
        )))
    }
}

/// Prints (or plots) a report saved with --json.
fn show_saved(file: &std::path::Path, args: &LitmusArgs, json: bool) -> Result<()> {
    let text = std::fs::read_to_string(file).map_err(|source| Error::Io {
        path: file.to_path_buf(),
        source,
    })?;
    let report: LitmusReport = serde_json::from_str(&text).map_err(|e| {
        Error::InvalidInput(format!("{}: not a litmus report: {e}", file.display()))
    })?;
    if let Some(path) = &args.plot {
        gridsync::plot::write_svg(path, &report.plot())?;
    }
    print_json_or(json, &report, |r| print_report(r, args.outcomes))
}

fn replay(target: &Target, opts: &LitmusOptions, run_no: u64, json: bool) -> Result<()> {
    let ([test], [variant]) = (&opts.tests[..], &opts.variants[..]) else {
        return Err(Error::InvalidInput(
            "--replay needs exactly one --test and one --variant".into(),
        ));
    };
    if !target.is_sim() {
        return Err(Error::InvalidInput(
            "--replay replays a simulator run: use it with --simulate".into(),
        ));
    }
    let mode = if opts.weak {
        gpu::sim::weak::Mode::Weak
    } else {
        gpu::sim::weak::Mode::Sc
    };
    let steps = model::replay(*test, *variant, mode, opts.seed, run_no);
    if json {
        return super::output::print_json(&steps);
    }
    println!(
        "{} {} on the simulator's {} memory, seed {}, run {run_no}:",
        test.name(),
        variant.name(),
        if opts.weak {
            "weak"
        } else {
            "sequentially consistent"
        },
        opts.seed
    );
    for s in steps {
        println!("  {s}");
    }
    Ok(())
}

fn placement(r: &LitmusResult) -> &'static str {
    r.placement.map_or("—", Placement::name)
}

fn print_report(r: &LitmusReport, outcomes: bool) {
    let memory = match r.memory.as_str() {
        "gpu" => "under stress".to_string(),
        m => format!(
            "on the simulator's {} memory",
            if m == "weak" {
                "weak"
            } else {
                "sequentially consistent"
            }
        ),
    };
    println!("litmus tests on the {} {memory}", r.target);
    if let Some((blocks, testing)) = r.blocks {
        println!(
            "  {blocks} blocks of {} threads, {testing} per SM testing, the rest stressing ({} loads and stores a round each, {} lines)",
            gpu::lessons::litmus::LITMUS_BLOCK_THREADS,
            r.options.stress.iters,
            r.options.stress.lines
        );
    }
    println!(
        "  each cell: how often the test's weak outcome was seen (and its rate); × where the PTX model forbids it"
    );
    let columns: Vec<Option<Placement>> = if r.memory == "gpu" {
        r.options.placements.iter().copied().map(Some).collect()
    } else {
        vec![None]
    };
    for &test in &r.options.tests {
        let mine: Vec<&LitmusResult> = r.results.iter().filter(|x| x.test == test).collect();
        let Some(first) = mine.first() else { continue };
        let cond: Vec<String> = test
            .digit_names()
            .iter()
            .zip(test.weak_outcome())
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        let (lo, hi) = mine.iter().fold((u64::MAX, 0), |(lo, hi), x| {
            (lo.min(x.instances), hi.max(x.instances))
        });
        println!();
        println!(
            "  {} — counting {} — {} each",
            first.name,
            cond.join(" ∧ "),
            if lo == hi {
                format!("{lo} instances")
            } else {
                format!("{lo} to {hi} instances")
            }
        );
        let cols: Vec<Option<Placement>> = if test.threads() == 1 {
            vec![None]
        } else {
            columns.clone()
        };
        let mut head = format!("    {:<12}", "");
        for p in &cols {
            let label = match p {
                Some(p) => p.name(),
                None if test.threads() == 1 => "one thread",
                None => "simulator",
            };
            head += &format!(" {label:>18}");
        }
        println!("{head}");
        for &v in &r.options.variants {
            let mut line = format!("    {:<12}", v.name());
            for &p in &cols {
                let cell = match mine.iter().find(|x| x.variant == v && x.placement == p) {
                    None => "—".to_string(),
                    Some(x) => {
                        let mark = if x.weak_forbidden { "×" } else { " " };
                        if x.weak == 0 {
                            format!("0{mark}")
                        } else {
                            format!("{} ({:.1e}){mark}", x.weak, x.weak_rate)
                        }
                    }
                };
                line += &format!(" {cell:>18}");
            }
            println!("{line}");
            for x in mine.iter().filter(|x| x.variant == v) {
                if x.forbidden > 0 {
                    println!(
                        "      FORBIDDEN OUTCOMES SEEN at {}: {}",
                        placement(x),
                        x.forbidden
                    );
                }
                if outcomes || x.forbidden > 0 {
                    println!("      {} {}:", x.variant.name(), placement(x));
                    for o in &x.outcomes {
                        let tag = match o.verdict {
                            Verdict::Sc => "",
                            Verdict::WeakAllowed => "  (weak, allowed)",
                            Verdict::Forbidden => "  (FORBIDDEN)",
                        };
                        println!("        {:>12}  {}{tag}", o.count, o.text);
                    }
                    if let Some(first) = x.first_weak_run {
                        println!(
                            "        first weak run: {first} (see it step by step: --test {} --variant {} --replay {first})",
                            x.name,
                            x.variant.name()
                        );
                    }
                }
            }
        }
    }
    println!();
    println!(
        "  {} combinations in {:.1} s; {} forbidden outcomes{}",
        r.results.len(),
        r.seconds,
        r.forbidden,
        if r.short > 0 {
            format!(
                "; {} combinations stopped short of {} (time)",
                r.short, r.options.iterations
            )
        } else {
            String::new()
        }
    );
}
