//! The litmus report as text: a table per test of the weak outcome's count and its rates per
//! instance and per second, every outcome where asked, and the verdict with its coverage.

use gridsync_cli::litmus::{LitmusReport, LitmusResult, Placement, RunVerdict, Test, Verdict};

/// Width of a table cell: `count rate/instance rate/s` and the mark.
const CELL: usize = 24;

pub(super) fn placement(r: &LitmusResult) -> &'static str {
    r.placement.map_or("—", Placement::name)
}

/// Prints the whole report: the heading, a table per test, the totals, the coverage and the
/// verdict.
pub(super) fn print_report(r: &LitmusReport, outcomes: bool) {
    print_heading(r);
    let columns: Vec<Option<Placement>> = if r.memory == "gpu" {
        r.options.placements.iter().copied().map(Some).collect()
    } else {
        vec![None]
    };
    for &test in &r.options.tests {
        print_test(r, test, &columns, outcomes);
    }
    print_totals(r);
    print_coverage(r);
}

/// Where the tests ran, the grid's shape on a GPU, and how to read a cell.
fn print_heading(r: &LitmusReport) {
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
        "  each cell: how often the test's weak outcome was seen, its rate per instance and per second; × where the PTX model forbids it"
    );
}

/// One test's table: its title, a row per variant with a cell per placement of `columns`,
/// and under each row the outcomes that were forbidden or asked for.
fn print_test(r: &LitmusReport, test: Test, columns: &[Option<Placement>], outcomes: bool) {
    let mine: Vec<&LitmusResult> = r.results.iter().filter(|x| x.test == test).collect();
    let Some(first) = mine.first() else { return };
    print_test_title(test, first, &mine);
    let cols: Vec<Option<Placement>> = if test.threads() == 1 {
        vec![None]
    } else {
        columns.to_vec()
    };
    let mut head = format!("    {:<12}", "");
    for p in &cols {
        let label = match p {
            Some(p) => p.name(),
            None if test.threads() == 1 => "one thread",
            None => "simulator",
        };
        head += &format!(" {label:>CELL$}");
    }
    println!("{head}");
    for &v in &r.options.variants {
        let mut line = format!("    {:<12}", v.name());
        for &p in &cols {
            let found = mine.iter().find(|x| x.variant == v && x.placement == p);
            line += &format!(" {:>CELL$}", found.map_or("—".to_string(), |x| cell(x)));
        }
        println!("{line}");
        for x in mine.iter().filter(|x| x.variant == v) {
            print_details(x, outcomes);
        }
    }
}

/// A test's title: its name, the weak outcome counted, and the instances each combination ran.
fn print_test_title(test: Test, first: &LitmusResult, mine: &[&LitmusResult]) {
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
}

/// One combination's cell: the weak outcome's count and rates, marked × where forbidden.
fn cell(x: &LitmusResult) -> String {
    let mark = if x.weak_forbidden { "×" } else { " " };
    if x.weak == 0 {
        format!("0{mark}")
    } else {
        format!(
            "{} {:.1e} {:.1e}/s{mark}",
            x.weak, x.weak_rate, x.weak_per_second
        )
    }
}

/// Under a row: forbidden outcomes seen, and every outcome's count where asked or forbidden
/// ones were seen, with the first weak run to replay.
fn print_details(x: &LitmusResult, outcomes: bool) {
    if x.forbidden > 0 {
        println!(
            "      FORBIDDEN OUTCOMES SEEN at {}: {}",
            placement(x),
            x.forbidden
        );
    }
    if !(outcomes || x.forbidden > 0) {
        return;
    }
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

/// The combinations run, the time, the forbidden outcomes, and those stopped short.
fn print_totals(r: &LitmusReport) {
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

/// The coverage rule, the combinations that broke it (each with what it ran), and the verdict.
fn print_coverage(r: &LitmusReport) {
    let floor = r.coverage_floor;
    println!(
        "  coverage: every combination must run at least {floor} instances (a tenth of the {} asked for)",
        r.options.iterations
    );
    if !r.fell_short.is_empty() {
        println!(
            "  TOO FEW INSTANCES in {} of {} combinations:",
            r.fell_short.len(),
            r.results.len()
        );
        for s in &r.fell_short {
            println!(
                "    {} {}{}: {} of {floor}",
                s.name,
                s.variant.name(),
                s.placement
                    .map_or(String::new(), |p| format!(" {}", p.name())),
                s.instances
            );
        }
    }
    println!(
        "  verdict: {}",
        match r.verdict {
            RunVerdict::Passed => "passed",
            RunVerdict::ForbiddenSeen => "FAILED: forbidden outcomes seen",
            RunVerdict::TooFewInstances => "FAILED: too few instances to judge",
        }
    );
}
