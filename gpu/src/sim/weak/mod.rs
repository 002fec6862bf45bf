//! The simulator's weak memory: the behaviours the PTX memory model allows a GPU to show, made
//! visible on a CPU, each run replayable from a seed.
//!
//! The simulator otherwise runs on the host's memory, whose caches are coherent and whose
//! atomics are strong: on x86-64 that is total store order, where the only reordering is a
//! store passing a later load of another location (the SB test), so there a missing fence
//! almost never fails a test. Here a load may return a
//! value another thread has already replaced, two stores may reach another thread in the
//! opposite order, and a thread's instructions may be issued out of order where nothing orders
//! them; fences and release/acquire accesses restore exactly the order the model promises.
//!
//! - [`Machine`]: the memory (every write of every location in coherence order, each thread's
//!   views of it); see its module for the rules and what they cover.
//! - [`program`]: litmus programs run on it, every choice left to a [`Chooser`]: [`Seeded`]
//!   (one generator per run, so run *k* of seed *s* replays alone) or [`Exhaustive`] (every
//!   possible run of a small program, so "never" is a proof for the machine, not a sample).
//!
//! What it covers: relaxed, volatile and plain loads and stores, release stores, acquire loads,
//! read-modify-writes, acquire-release and SC fences, each at its scope: a kernel's blocks are
//! apart ([`Machine::with_blocks`]), so a `.cta` release or fence reaches its own block only, and
//! a `.cta` read-modify-write is atomic only with its own block's (a litmus program's threads
//! are one block). What it never shows: values out of thin air, and anything the model forbids;
//! clusters are refused.

pub mod chooser;
pub mod machine;
pub mod program;
pub(crate) mod sched;
#[cfg(test)]
mod scope_tests;
pub mod view;

pub use chooser::{Chooser, Exhaustive, Seeded};
pub use machine::{Event, FenceKind, LoadKind, Machine, StoreKind};
pub use program::{Instr, Mode, Outcome, Program, RmwOp};
pub use sched::{WeakStats, scoped};
pub use view::{Loc, Stamp, View};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atomic::Order;
    use std::collections::BTreeSet;

    const X: Loc = 0;
    const Y: Loc = 1;

    /// How a test's accesses and fences are made.
    #[derive(Clone, Copy)]
    enum V {
        Relaxed,
        RelAcq,
        FenceAcqRel,
        FenceSc,
    }

    fn st(loc: Loc, value: u64, v: V) -> Instr {
        let kind = match v {
            V::RelAcq => StoreKind::Release,
            _ => StoreKind::Relaxed,
        };
        Instr::Store { loc, value, kind }
    }

    fn ld(reg: usize, loc: Loc, v: V) -> Instr {
        let kind = match v {
            V::RelAcq => LoadKind::Acquire,
            _ => LoadKind::Relaxed,
        };
        Instr::Load { reg, loc, kind }
    }

    /// `a`, the variant's fence, `b`.
    fn pair(a: Instr, b: Instr, v: V) -> Vec<Instr> {
        match v {
            V::FenceAcqRel => vec![a, Instr::Fence(FenceKind::AcqRel), b],
            V::FenceSc => vec![a, Instr::Fence(FenceKind::Sc), b],
            V::Relaxed | V::RelAcq => vec![a, b],
        }
    }

    fn reachable(p: &Program, mode: Mode) -> BTreeSet<Vec<u64>> {
        program::reachable(p, mode)
    }

    fn prog(threads: Vec<Vec<Instr>>, regs: usize, finals: Vec<Loc>) -> Program {
        Program {
            threads,
            regs,
            finals,
        }
    }

    fn mp(v: V) -> Program {
        prog(
            vec![
                pair(st(X, 1, v), st(Y, 1, v), v),
                pair(ld(0, Y, v), ld(1, X, v), v),
            ],
            2,
            vec![],
        )
    }

    fn sb(v: V) -> Program {
        prog(
            vec![
                pair(st(X, 1, v), ld(0, Y, v), v),
                pair(st(Y, 1, v), ld(1, X, v), v),
            ],
            2,
            vec![],
        )
    }

    fn lb(v: V) -> Program {
        prog(
            vec![
                pair(ld(0, X, v), st(Y, 1, v), v),
                pair(ld(1, Y, v), st(X, 1, v), v),
            ],
            2,
            vec![],
        )
    }

    fn two_plus_two_w(v: V) -> Program {
        prog(
            vec![
                pair(st(X, 1, v), st(Y, 2, v), v),
                pair(st(Y, 1, v), st(X, 2, v), v),
            ],
            0,
            vec![X, Y],
        )
    }

    fn iriw(v: V) -> Program {
        prog(
            vec![
                vec![st(X, 1, v)],
                vec![st(Y, 1, v)],
                pair(ld(0, X, v), ld(1, Y, v), v),
                pair(ld(2, Y, v), ld(3, X, v), v),
            ],
            4,
            vec![],
        )
    }

    fn wrc(v: V) -> Program {
        prog(
            vec![
                vec![st(X, 1, v)],
                pair(ld(0, X, v), st(Y, 1, v), v),
                pair(ld(1, Y, v), ld(2, X, v), v),
            ],
            3,
            vec![],
        )
    }

    #[test]
    fn sc_runs_show_only_interleavings() {
        for v in [V::Relaxed, V::FenceSc] {
            let mp = reachable(&mp(v), Mode::Sc);
            assert!(!mp.contains(&vec![1, 0]));
            assert_eq!(mp.len(), 3, "{mp:?}");
            assert!(!reachable(&sb(v), Mode::Sc).contains(&vec![0, 0]));
            assert!(!reachable(&lb(v), Mode::Sc).contains(&vec![1, 1]));
        }
    }

    #[test]
    fn each_weak_outcome_needs_exactly_the_ordering_the_model_says() {
        use V::*;
        /// (shape, weak outcome, variants that show it, variants that must not)
        type Case<'a> = (&'a str, fn(V) -> Program, Vec<u64>, &'a [V], &'a [V]);
        let cases: [Case; 6] = [
            (
                "MP",
                mp,
                vec![1, 0],
                &[Relaxed],
                &[RelAcq, FenceAcqRel, FenceSc],
            ),
            (
                "SB",
                sb,
                vec![0, 0],
                &[Relaxed, RelAcq, FenceAcqRel],
                &[FenceSc],
            ),
            (
                "LB",
                lb,
                vec![1, 1],
                &[Relaxed],
                &[RelAcq, FenceAcqRel, FenceSc],
            ),
            (
                "2+2W",
                two_plus_two_w,
                vec![1, 1],
                &[Relaxed, RelAcq, FenceAcqRel],
                &[FenceSc],
            ),
            (
                "IRIW",
                iriw,
                vec![1, 0, 1, 0],
                &[Relaxed, RelAcq, FenceAcqRel],
                &[FenceSc],
            ),
            (
                "WRC",
                wrc,
                vec![1, 1, 0],
                &[Relaxed],
                &[RelAcq, FenceAcqRel, FenceSc],
            ),
        ];
        for (name, shape, weak, shows, never) in cases {
            for &v in shows {
                assert!(
                    reachable(&shape(v), Mode::Weak).contains(&weak),
                    "{name} must show {weak:?}"
                );
            }
            for &v in never {
                assert!(
                    !reachable(&shape(v), Mode::Weak).contains(&weak),
                    "{name} must not show {weak:?}"
                );
            }
        }
    }

    #[test]
    fn coherence_holds_even_relaxed() {
        let corr = prog(
            vec![
                vec![st(X, 1, V::Relaxed)],
                vec![ld(0, X, V::Relaxed), ld(1, X, V::Relaxed)],
            ],
            2,
            vec![],
        );
        let seen = reachable(&corr, Mode::Weak);
        assert!(
            seen.contains(&vec![0, 1]) && !seen.contains(&vec![1, 0]),
            "{seen:?}"
        );
        let coww = prog(
            vec![vec![st(X, 1, V::Relaxed), st(X, 2, V::Relaxed)]],
            0,
            vec![X],
        );
        assert_eq!(reachable(&coww, Mode::Weak), BTreeSet::from([vec![2]]));
    }

    #[test]
    fn a_read_modify_write_reads_the_newest_write() {
        // Two increments never lose one, however stale the threads' views.
        let mut ch = Exhaustive::new();
        loop {
            let mut m = Machine::new(2);
            let mut sum = 0;
            for t in [0, 1, 0] {
                sum += m.rmw(t, X, Order::Relaxed, |v| Some(v + 1));
            }
            assert_eq!((m.latest(X), sum), (3, 3));
            // A stale load is still possible next to them.
            let seen = m.load(1, X, LoadKind::Relaxed, &mut ch);
            assert!(seen >= 2, "thread 1's own increment (1 → 2) is in its view");
            if !ch.next_run() {
                break;
            }
        }
    }

    #[test]
    fn a_seeded_run_replays_with_its_trace() {
        let p = mp(V::Relaxed);
        let weak = |r| {
            program::run(&p, Mode::Weak, false, &mut Seeded::new(7, r))
                .outcome
                .regs
                == [1, 0]
        };
        let runs: Vec<u64> = (0..10_000u64).filter(|&r| weak(r)).collect();
        assert!(
            runs.len() > 50,
            "the weak outcome in {} of 10 000 runs",
            runs.len()
        );
        let mut stale = false;
        for &r in &runs[..20] {
            let a = program::run(&p, Mode::Weak, true, &mut Seeded::new(7, r));
            let b = program::run(&p, Mode::Weak, true, &mut Seeded::new(7, r));
            assert_eq!(a.outcome.regs, [1, 0]);
            assert_eq!(
                (a.machine.trace(), &a.issued),
                (b.machine.trace(), &b.issued)
            );
            assert_eq!(a.machine.trace().len(), 4);
            // Either thread 1 read a stale x, or an instruction was issued out of order.
            let in_order = |t| {
                a.issued
                    .iter()
                    .filter(|&&(u, _)| u == t)
                    .map(|&(_, i)| i)
                    .is_sorted()
            };
            stale |= a.machine.trace().iter().any(|e| {
                matches!(
                    e,
                    Event::Load {
                        loc: X,
                        stale: true,
                        ..
                    }
                )
            });
            assert!(stale || !in_order(0) || !in_order(1), "{:?}", a.issued);
        }
        assert!(stale, "some weak run reads a stale x in order");
    }
}
