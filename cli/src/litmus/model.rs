//! The litmus tests on the simulator's memory: seeded runs of each test's program, on the
//! sequentially consistent memory or the weak one (`gpu::sim::weak`), each run replayable from
//! the seed and its number.

use super::catalogue::{Test, Variant};
use gpu::sim::weak::{Event, Mode, Seeded, program};
use std::collections::BTreeMap;
use std::time::Instant;

/// What the seeded runs of one test and variant gave.
#[derive(Clone, Debug, Default)]
pub struct ModelRuns {
    /// Runs made.
    pub runs: u64,
    /// Each outcome: how many runs gave it, and the first run that did.
    pub outcomes: BTreeMap<Vec<u64>, (u64, u64)>,
}

/// Runs `test` with `variant` `runs` times (or until `deadline`, after at least one run), run
/// `r` with `Seeded::new(seed, r)`.
pub fn run_seeded(
    test: Test,
    variant: Variant,
    mode: Mode,
    runs: u64,
    seed: u64,
    deadline: Instant,
) -> ModelRuns {
    let p = test.program(variant);
    let mut out = ModelRuns::default();
    for r in 0..runs.max(1) {
        // Looking at the clock every run would cost as much as a run.
        if r > 0 && r % 4096 == 0 && Instant::now() >= deadline {
            break;
        }
        let o = program::run(&p, mode, false, &mut Seeded::new(seed, r)).outcome;
        let entry = out
            .outcomes
            .entry([o.regs, o.finals].concat())
            .or_insert((0, r));
        entry.0 += 1;
        out.runs += 1;
    }
    out
}

/// Run `run` of `seed` again, and tells it step by step: the order instructions were issued
/// in, what each load read (and whether a newer write existed), where each store went.
pub fn replay(test: Test, variant: Variant, mode: Mode, seed: u64, run: u64) -> Vec<String> {
    let p = test.program(variant);
    let r = program::run(&p, mode, true, &mut Seeded::new(seed, run));
    let loc = |l: u64| if l == 0 { "x" } else { "y" };
    let mut lines = Vec::new();
    let mut events = r.machine.trace().iter();
    for &(t, i) in &r.issued {
        let pos = |e: (usize, usize)| r.issued.iter().position(|&x| x == e);
        let issued_early = (0..i).any(|j| pos((t, j)) > pos((t, i)));
        let what = match events.next() {
            Some(Event::Load {
                loc: l,
                value,
                stale,
                ..
            }) => format!(
                "loads {} = {value}{}",
                loc(*l),
                if *stale {
                    " (a newer write exists: stale)"
                } else {
                    ""
                }
            ),
            Some(Event::Store {
                loc: l,
                value,
                before_newer,
                ..
            }) => format!(
                "stores {} = {value}{}",
                loc(*l),
                if *before_newer {
                    " (placed before a newer write)"
                } else {
                    ""
                }
            ),
            Some(Event::Fence { kind, .. }) => format!("fence {kind:?}"),
            Some(Event::Rmw {
                loc: l, old, new, ..
            }) => match new {
                Some(v) => format!("read-modify-write of {}: read {old}, wrote {v}", loc(*l)),
                None => format!("compare-and-swap of {}: read {old}, wrote nothing", loc(*l)),
            },
            None => "?".to_string(),
        };
        lines.push(format!(
            "thread {t}, instruction {i}: {what}{}",
            if issued_early {
                " — issued before an earlier instruction of its thread"
            } else {
                ""
            }
        ));
    }
    let o = &r.outcome;
    lines.push(format!(
        "outcome: {}",
        super::outcome::text(test, Some(&[o.regs.clone(), o.finals.clone()].concat()))
    ));
    lines
}
