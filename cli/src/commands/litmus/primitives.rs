//! `gridsync litmus --primitives`: gridsync's locks and barriers under stress.

use super::LitmusArgs;
use crate::commands::output::print_json_or;
use crate::commands::table::Table;
use gridsync::{Error, Result, Target};
use std::io::{IsTerminal, Write};

/// `--primitives`: the locks and barriers under stress.
pub fn command(targets: &[Target], args: &LitmusArgs, json: bool) -> Result<()> {
    use gridsync_cli::litmus::primitives::{PrimitiveOptions, run_all_on};
    let target = &targets[0];
    let d = PrimitiveOptions::for_target(target);
    let opts = PrimitiveOptions {
        acquisitions: args.acquisitions.unwrap_or(d.acquisitions),
        rounds: args.rounds.unwrap_or(d.rounds),
        seconds: args.seconds.unwrap_or(d.seconds),
        seed: args.seed.unwrap_or(d.seed),
        weak: target.is_sim() && (args.weak || d.weak),
        stress: gridsync_cli::litmus::Stress {
            iters: args.stress.iters.unwrap_or(d.stress.iters),
            lines: args.stress.lines.unwrap_or(d.stress.lines),
            ..d.stress
        },
        ..d
    };
    let show = !json && std::io::stderr().is_terminal();
    let r = run_all_on(targets, &opts, |p| {
        if show {
            eprint!("\rprimitives: {}\x1b[K", p.name);
            let _ = std::io::stderr().flush();
        }
    })?;
    if show {
        eprint!("\r\x1b[K");
    }
    print_json_or(json, &r, |r| {
        println!(
            "gridsync's locks and barriers under stress on the {} ({} memory): plain payloads checked on every use",
            r.target, r.memory
        );
        println!(
            "  locks: {} blocks × {} threads over {} locks; barriers: {} blocks × {} threads",
            r.lock_shape.blocks,
            r.lock_shape.threads,
            r.lock_shape.locks,
            r.barrier_shape.blocks,
            r.barrier_shape.threads
        );
        println!();
        let t = Table::new(
            "  {primitive:<36} {gpus:>4} {uses:>14} {checks:>14} {violations:>11} {lost:>11} \
             {gave up:>8} {s:>8.1}  {verdict}",
        );
        t.header();
        for p in &r.runs {
            let verdict = match (p.primitive.must_hold(p.devices), p.clean()) {
                (true, true) => "clean",
                (true, false) => "FAILED",
                (false, clean) if p.primitive.broken() => {
                    if clean {
                        "not caught here"
                    } else {
                        "caught (as it must be)"
                    }
                }
                (false, true) => "clean (scope too narrow: not promised)",
                (false, false) => "broken (scope too narrow, as the model allows)",
            };
            t.row(&[
                &p.name,
                &p.devices,
                &p.uses,
                &p.checks,
                &p.violations,
                &p.lost,
                &p.failures,
                &p.seconds,
                &verdict,
            ]);
        }
    })?;
    if r.passed() {
        Ok(())
    } else {
        Err(Error::Mismatch(
            "a correct lock or barrier failed its payload checks".into(),
        ))
    }
}
