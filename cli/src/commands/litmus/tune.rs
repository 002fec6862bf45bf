//! `gridsync litmus --tune`: the stressing parameters searched for the highest rate of one
//! test's weak outcome on the device at hand.

use super::LitmusArgs;
use crate::commands::output::print_json_or;
use gridsync::{Error, Result, Target};
use gridsync_cli::litmus::tune::{MIN_TRIAL_WEAK, Trial, TuneOptions, TuneReport, tune};
use std::io::{IsTerminal, Write};

/// At most one of `given`, or `default` when none.
fn one<T: Copy>(given: &[T], default: T, option: &str) -> Result<T> {
    match given {
        [] => Ok(default),
        [x] => Ok(*x),
        _ => Err(Error::InvalidInput(format!(
            "--tune maximizes one test's weak outcome: give {option} once"
        ))),
    }
}

/// `--tune`: the search, its trials and the best parameters as options.
pub fn command(target: &Target, args: &LitmusArgs, json: bool) -> Result<()> {
    if args.weak {
        return Err(Error::InvalidInput(
            "--tune runs the litmus kernel, whose simulated memory is sequentially consistent: \
             --weak is for the tests' programs"
                .into(),
        ));
    }
    let d = TuneOptions::for_target(target);
    let opts = TuneOptions {
        test: one(&args.tests, d.test, "--test")?,
        variant: one(&args.variants, d.variant, "--variant")?,
        placement: one(&args.placements, d.placement, "--placement")?,
        seconds: args.seconds.unwrap_or(d.seconds),
        seed: args.seed.unwrap_or(d.seed),
        start: args.stress.stress()?,
    };
    let show = !json && std::io::stderr().is_terminal();
    let mut n = 0;
    let r = tune(target, &opts, |t| {
        n += 1;
        if show {
            eprint!("\rtune: trial {n}: {:.1e} per instance\x1b[K", t.weak_rate);
            let _ = std::io::stderr().flush();
        }
    })?;
    if show {
        eprint!("\r\x1b[K");
    }
    print_json_or(json, &r, print_tune)
}

fn print_tune(r: &TuneReport) {
    let o = &r.options;
    println!(
        "tuning the stressing parameters for {} {} at {} on the {}: {} trials of {:.2} s",
        r.name,
        o.variant.name(),
        o.placement.name(),
        r.target,
        r.trials.len(),
        r.trial_seconds
    );
    println!(
        "  each trial changes one parameter of the best before it; the rate is the weak outcome's, per instance and per second"
    );
    println!(
        "  ranked by low, the 95% lower bound of the rate per instance (Wilson), among the trials that saw it ≥ {MIN_TRIAL_WEAK} times"
    );
    println!();
    let stress: Vec<String> = STRESS_COLUMNS
        .iter()
        .map(|&(header, width)| format!("{header:<width$}"))
        .collect();
    println!(
        "  {:>3} {:<15} {} {:>12} {:>9} {:>9} {:>9} {:>9}",
        "#",
        "changed",
        stress.join(" "),
        "instances",
        "weak",
        "/instance",
        "low",
        "/s"
    );
    for (i, t) in r.trials.iter().enumerate() {
        print_trial(i, t, i == r.best);
    }
    let (best, start) = (r.best(), r.start());
    println!();
    println!(
        "  start: {:.2e} per instance, {:.2e} per second",
        start.weak_rate, start.weak_per_second
    );
    if r.trials.iter().all(|t| t.weak == 0) {
        println!(
            "  no trial saw the weak outcome: nothing to rank (on the simulator its memory is sequentially consistent)"
        );
    } else if best.score().is_none() {
        println!(
            "  no trial saw the weak outcome {MIN_TRIAL_WEAK} times: too few to rank (give --seconds more)"
        );
    } else {
        println!(
            "  best (trial {}): {:.2e} per instance (95%: ≥ {:.2e}; {:.1}× the start), {:.2e} per second",
            r.best,
            best.weak_rate,
            best.weak_rate_low,
            best.weak_rate / start.weak_rate.max(f64::MIN_POSITIVE),
            best.weak_per_second
        );
    }
    println!("  best options: {}", best.stress.flags());
    println!("  {:.1} s in all", r.seconds);
}

/// The columns of the stressing parameters, header and width, in the order of
/// [`Stress::options`](gridsync_cli::litmus::Stress::options).
const STRESS_COLUMNS: [(&str, usize); 8] = [
    ("sm-order", 9),
    ("iters", 6),
    ("lines", 6),
    ("pattern", 12),
    ("pre", 5),
    ("stride", 6),
    ("blocks", 6),
    ("spin", 4),
];

fn print_trial(i: usize, t: &Trial, best: bool) {
    let stress: Vec<String> = STRESS_COLUMNS
        .iter()
        .zip(t.stress.options())
        .map(|(&(_, width), (_, value))| format!("{value:<width$}"))
        .collect();
    println!(
        "  {:>3} {:<15} {} {:>12} {:>9} {:>9.2e} {:>9.2e} {:>9.2e}{}",
        i,
        t.changed.as_deref().unwrap_or("(start)"),
        stress.join(" "),
        t.instances,
        t.weak,
        t.weak_rate,
        t.weak_rate_low,
        t.weak_per_second,
        if best { "  ← best" } else { "" }
    );
}
