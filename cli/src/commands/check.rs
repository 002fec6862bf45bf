//! `gridsync check`: every lesson and library kernel on the simulator under the checker, each
//! with what it must show.

use super::output::{Bar, print_json};
use clap::Args;
use gridsync::check::{Options, VolatileAs};
use gridsync::{Error, Result};
use gridsync_cli::check::{CaseOutcome, CheckReport, Expect, How, Verdict, cases, run};

#[derive(Args)]
pub struct CheckArgs {
    /// Topics to check (race, locks, barrier, atomics, primitives, mbarrier, hopper, pipeline,
    /// reduce, streams, histogram, dot, neighbor, count-above) [default: all].
    #[arg(value_name = "TOPIC")]
    topics: Vec<String>,
    /// Count a volatile access as a plain one (stricter than PTX, which counts it relaxed at
    /// system scope).
    #[arg(long)]
    volatile_as_plain: bool,
    /// List the kernels and what each must show, without running them.
    #[arg(long)]
    list: bool,
    /// Also run each kernel without the checker, and print what the checker costs: the median
    /// wall time of 5 runs each way, and their ratio.
    #[arg(long)]
    cost: bool,
    /// Run every launch on the weak memory too, seeded with SEED (1 if not given): a stale read,
    /// or an update a narrow scope lost, also shows as a wrong answer. One thread runs at a time
    /// there, so the whole list takes minutes; kernels it cannot run or judge are listed as not
    /// run, each with why.
    #[arg(long, value_name = "SEED", num_args = 0..=1, default_missing_value = "1")]
    weak: Option<u64>,
}

pub fn command(args: &CheckArgs, json: bool) -> Result<()> {
    if args.list {
        return list(json);
    }
    let how = How {
        options: Options {
            volatile: if args.volatile_as_plain {
                VolatileAs::Plain
            } else {
                VolatileAs::RelaxedSystem
            },
            ..Options::DEFAULT
        },
        cost: args.cost,
        weak: args.weak,
    };
    let mut bar = Bar::new(!json, "check", "{prefix} [{bar:30}] {pos}/{len} {msg}");
    let report = run(&args.topics, how, |done, total, kernel| {
        bar.set(done as u64, total as u64, Some(kernel.to_string()))
    })?;
    drop(bar);
    if json {
        print_json(&report)?;
    } else {
        print_report(&report);
    }
    if report.passed() {
        Ok(())
    } else {
        Err(Error::Mismatch(format!(
            "{} broken kernels missed, {} false positives, {} failed runs",
            report.missed, report.false_positives, report.failed
        )))
    }
}

fn list(json: bool) -> Result<()> {
    let cases = cases();
    if json {
        let rows: Vec<_> = cases
            .iter()
            .map(|c| {
                serde_json::json!({
                    "topic": c.topic, "kernel": c.kernel, "expect": c.expect,
                    "shape": c.shape, "why": c.why,
                })
            })
            .collect();
        return print_json(&rows);
    }
    println!(
        "{:<12} {:<32} {:<12} {:<26} why",
        "topic", "kernel", "must show", "launch"
    );
    for c in &cases {
        println!(
            "{:<12} {:<32} {:<12} {:<26} {}",
            c.topic,
            c.kernel,
            c.expect.name(),
            c.shape,
            c.why
        );
    }
    Ok(())
}

/// `race.rs:27` for a site `gpu/src/lessons/race.rs:27:13`.
fn short_site(site: &str) -> String {
    let mut parts = site.rsplitn(3, ':');
    let (_col, line, file) = (parts.next(), parts.next(), parts.next());
    match (file, line) {
        (Some(file), Some(line)) => {
            let name = file.rsplit(['/', '\\']).next().unwrap_or(file);
            format!("{name}:{line}")
        }
        _ => site.to_string(),
    }
}

/// `file.rs:line` as (file, line), to order sites by line number, not as text.
fn site_order(site: &str) -> (&str, u32) {
    match site.rsplit_once(':') {
        Some((file, line)) => (file, line.parse().unwrap_or(0)),
        None => (site, 0),
    }
}

/// Where a finding `(kind, site, site)` goes in a row: the kind the kernel `must` show first,
/// then by kind, and by line (then file) of each site.
fn row_key<'a>(
    (kind, a, b): &'a (&'a str, String, String),
    must: Option<&str>,
) -> (bool, &'a str, u32, &'a str, u32, &'a str) {
    let (a_line, b_line) = (site_order(a).1, site_order(b).1);
    (Some(*kind) != must, kind, a_line, a, b_line, b)
}

/// What the checker found, in a few words: a stuck wait or a failed run first, then each
/// finding's kind and its two lines (the earlier line first; the findings in order of kind and
/// line, so that two runs that found the same print the same).
fn found(k: &CaseOutcome) -> String {
    if let Some(why) = &k.not_run {
        return why.clone();
    }
    let mut parts: Vec<String> = Vec::new();
    if let Some(s) = &k.stuck {
        parts.push(format!("stuck: {s}"));
    }
    if let Some(e) = &k.error {
        parts.push(format!("error: {e}"));
    }
    let mut pairs: Vec<(&str, String, String)> = k
        .findings
        .iter()
        .map(|f| {
            let (a, b) = (short_site(&f.first.site), short_site(&f.second.site));
            let (a, b) = if site_order(&b) < site_order(&a) {
                (b, a)
            } else {
                (a, b)
            };
            (f.kind, a, b)
        })
        .collect();
    // The kind the kernel must show first.
    let must = k.expect.finding().map(|f| f.name());
    pairs.sort_by(|x, y| row_key(x, must).cmp(&row_key(y, must)));
    pairs.dedup();
    parts.extend(pairs.into_iter().map(|(kind, a, b)| {
        let pair = if a == b { a } else { format!("{a} ↔ {b}") };
        format!("{kind} {pair}")
    }));
    if parts.is_empty() {
        return "nothing".into();
    }
    let more = parts.len().saturating_sub(2);
    parts.truncate(2);
    let mut s = parts.join("; ");
    if more > 0 {
        s.push_str(&format!("; {more} more"));
    }
    s
}

fn print_report(r: &CheckReport) {
    println!(
        "the checker on the simulator: {} kernels at small shapes, every access followed with its \
         happens-before (volatile as {}){}",
        r.kernels.len(),
        if r.volatile_as_plain {
            "plain"
        } else {
            "PTX has it: relaxed at system scope"
        },
        r.weak_seed
            .map_or(String::new(), |s| format!("; on the weak memory, seed {s}"))
    );
    println!();
    println!(
        "  {:<12} {:<32} {:<12} {:<9} found",
        "topic", "kernel", "must show", "verdict"
    );
    for k in &r.kernels {
        let verdict = match k.verdict {
            Verdict::Ok => "ok",
            Verdict::Missed => "MISSED",
            Verdict::FalsePositive => "FALSE+",
            Verdict::Failed => "FAILED",
            Verdict::NotRun => "not run",
        };
        println!(
            "  {:<12} {:<32} {:<12} {:<9} {}",
            k.topic,
            k.kernel,
            k.expect.name(),
            verdict,
            found(k)
        );
    }
    print_cost(r);
    let with_findings: Vec<_> = r
        .kernels
        .iter()
        .filter(|k| !k.findings.is_empty() || k.stuck.is_some())
        .collect();
    if !with_findings.is_empty() {
        println!();
        println!("what was found, each with both lines:");
        for k in with_findings {
            println!();
            println!("{} ({}, {}):", k.kernel, k.topic, k.shape);
            if let Some(s) = &k.stuck {
                println!("  stuck wait: {s}");
            }
            for line in k.report.lines() {
                println!("  {line}");
            }
        }
    }
    let run: Vec<&CaseOutcome> = r
        .kernels
        .iter()
        .filter(|k| k.verdict != Verdict::NotRun)
        .collect();
    let broken = run.iter().filter(|k| k.expect.name() != "clean").count();
    let caught = run
        .iter()
        .filter(|k| k.expect.name() != "clean" && k.verdict == Verdict::Ok)
        .count();
    let clean = run.len() - broken;
    let clean_ok = run
        .iter()
        .filter(|k| k.expect.name() == "clean" && k.verdict == Verdict::Ok)
        .count();
    println!();
    println!(
        "{} kernels: {caught} of {broken} broken kernels found, {clean_ok} of {clean} correct \
         kernels clean; {} missed, {} false positives, {} failed runs{}",
        r.kernels.len(),
        r.missed,
        r.false_positives,
        r.failed,
        if r.not_run > 0 {
            format!(
                "; {} not run on the weak memory (each row says why)",
                r.not_run
            )
        } else {
            String::new()
        }
    );
}

/// With `--cost`: each kernel's wall time without and with the checker, and the ratio.
fn print_cost(r: &CheckReport) {
    let timed: Vec<(&CaseOutcome, f64)> = r
        .kernels
        .iter()
        .filter_map(|k| k.plain_ms.map(|p| (k, p)))
        .collect();
    if timed.is_empty() {
        return;
    }
    println!();
    println!(
        "what the checker costs (wall time on this machine, each kernel's whole library call):"
    );
    println!(
        "  {:<32} {:>10} {:>10} {:>7}",
        "kernel", "plain ms", "checked ms", "×"
    );
    let mut ratios = Vec::new();
    for (k, plain) in &timed {
        let ratio = k.ms / plain.max(1e-3);
        // A kernel that must get stuck runs until its wait gives up, with or without the
        // checker: its time is the wait's bound, not the checker's work.
        let bounded = k.expect == Expect::Stuck;
        if !bounded {
            ratios.push(ratio);
        }
        println!(
            "  {:<32} {:>10.1} {:>10.1} {:>7.1}{}",
            k.kernel,
            plain,
            k.ms,
            ratio,
            if bounded { "  (a wait's bound)" } else { "" }
        );
    }
    ratios.sort_by(f64::total_cmp);
    let (plain, checked) = timed
        .iter()
        .fold((0.0, 0.0), |(p, c), (k, plain)| (p + plain, c + k.ms));
    let spread = match (ratios.get(ratios.len() / 2), ratios.last()) {
        (Some(median), Some(most)) => format!(
            "; per kernel, those that end at a wait's bound aside, the median {median:.1}×, the \
             most {most:.1}×"
        ),
        _ => String::new(),
    };
    println!(
        "  all {} kernels: {plain:.0} ms plain, {checked:.0} ms checked ({:.1}×){spread}",
        timed.len(),
        checked / f64::max(plain, 1e-3),
    );
}
