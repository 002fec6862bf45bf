//! `gridsync litmus`: the memory model's litmus tests, on the GPU under stress or on the
//! simulator's memory.

mod primitives;
mod report;
mod stress;
mod tune;

use super::output::{Bar, parse_option, print_json_or};
use clap::Args;
use gridsync::multi::{DeviceList, DeviceSet};
use gridsync::{Error, Result, Target};
use gridsync_cli::litmus::{
    LitmusOptions, LitmusReport, Placement, RunVerdict, Test, Variant, model, run_on,
};
use report::{placement, print_report};
use std::io::Write;

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
    #[command(flatten)]
    stress: stress::StressArgs,
    /// Instead of the tests: search the stressing parameters for the highest rate of one
    /// test's weak outcome (--test, --variant, --placement: one each [default: MP relaxed sms])
    /// within --seconds [default: 60 on a GPU, 10 on the simulator], starting from the
    /// parameters given, and print the best.
    #[arg(long)]
    tune: bool,
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
    if args.tune {
        return tune::command(target, args, json);
    }
    if args.primitives {
        if args.stress.beyond_iters_and_lines() {
            return Err(Error::InvalidInput(
                "--primitives stresses with --stress-iters and --stress-lines only".into(),
            ));
        }
        return primitives::command(targets, args, json);
    }
    if target.is_sim() {
        stress::refuse_for_programs(&args.stress)?;
    }
    let opts = LitmusOptions {
        tests: or_all(&args.tests, defaults.tests.clone()),
        variants: or_all(&args.variants, defaults.variants.clone()),
        placements: or_all(&args.placements, defaults.placements.clone()),
        iterations: args.iterations.unwrap_or(defaults.iterations),
        seconds: args.seconds.unwrap_or(defaults.seconds),
        seed: args.seed.unwrap_or(defaults.seed),
        weak: args.weak,
        stress: args.stress.stress()?,
    };
    if let Some(path) = &args.plot {
        gridsync_cli::plot::check_svg_path(path)?;
    }
    if let Some(run_no) = args.replay {
        return replay(target, &opts, run_no, json);
    }
    // Up to this many combinations: a placement a test cannot take is skipped.
    let total = (opts.tests.len() * opts.variants.len() * opts.placements.len()) as u64;
    let mut bar = Bar::new(
        !json,
        "litmus",
        "{prefix} [{bar:30}] {pos}/{len} {elapsed}<{eta} {msg}",
    );
    let mut done = 0;
    let report = run_on(targets, &opts, |r| {
        done += 1;
        let at = format!("{} {} {}", r.name, r.variant.name(), placement(r));
        bar.set(done, total.max(done + 1), Some(at));
    })?;
    drop(bar);
    if let Some(path) = &args.plot {
        gridsync_cli::plot::write_svg(path, &report.plot())?;
    }
    print_json_or(json, &report, |r| print_report(r, args.outcomes))?;
    verdict(&report)
}

/// The exit status of a run whose combinations ran too few instances to be judged
/// ([`RunVerdict::TooFewInstances`]): not 1, an error, nor 2, a usage error, nor 4, a forbidden
/// outcome.
pub const EXIT_TOO_FEW_INSTANCES: i32 = 3;

/// The run's verdict as the command's result: nothing for a pass, an error for a forbidden
/// outcome (an `Error::Mismatch`: exit status 4), and for too few instances a message and exit status
/// [`EXIT_TOO_FEW_INSTANCES`] (after the report, which is printed and flushed).
fn verdict(report: &LitmusReport) -> Result<()> {
    let short = |r: &LitmusReport| {
        format!(
            "{} of {} combinations ran fewer than {} instances (a tenth of the {} asked for)",
            r.fell_short.len(),
            r.results.len(),
            r.coverage_floor,
            r.options.iterations
        )
    };
    match report.verdict {
        RunVerdict::Passed => Ok(()),
        RunVerdict::ForbiddenSeen => Err(Error::Mismatch(format!(
            "{} forbidden outcomes observed: a bug in the test, or a finding about the hardware{}",
            report.forbidden,
            if report.fell_short.is_empty() {
                String::new()
            } else {
                format!("; and {}", short(report))
            }
        ))),
        RunVerdict::TooFewInstances => {
            let _ = std::io::stdout().flush();
            eprintln!(
                "gridsync: litmus: too few instances to judge: {}; no forbidden outcome was seen in \
                 what ran, but that is no pass (give it more --seconds, or fewer --iterations)",
                short(report)
            );
            std::process::exit(EXIT_TOO_FEW_INSTANCES)
        }
    }
}

/// Prints (or plots) a report saved with --json.
fn show_saved(file: &std::path::Path, args: &LitmusArgs, json: bool) -> Result<()> {
    let text = std::fs::read_to_string(file).map_err(|source| Error::Io {
        path: file.to_path_buf(),
        source,
    })?;
    let mut report: LitmusReport = serde_json::from_str(&text).map_err(|e| {
        Error::InvalidInput(format!("{}: not a litmus report: {e}", file.display()))
    })?;
    report.judge();
    if let Some(path) = &args.plot {
        gridsync_cli::plot::write_svg(path, &report.plot())?;
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
