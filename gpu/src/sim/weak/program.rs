//! Litmus programs on the weak machine: a few threads of loads, stores and fences, run with
//! every choice — which thread goes next, which write a load reads, where a store is placed —
//! left to a [`Chooser`].
//!
//! A thread may also issue an instruction before earlier ones of its own when nothing orders
//! them: different locations, no fence between, the earlier not an acquire, the later not a
//! release. A load reads the value it would have read at that moment, so a store can become
//! visible before an earlier load of its thread has read — load buffering (LB), which the
//! machine's views alone cannot show. Litmus instructions have no dependencies between them
//! (stored values are constants), so the PTX memory model allows each such reordering.

use super::chooser::Chooser;
use super::machine::{FenceKind, LoadKind, Machine, StoreKind};
use super::view::Loc;
use crate::atomic::Order;

/// One instruction of a litmus thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Instr {
    /// Store a constant.
    Store {
        /// Where.
        loc: Loc,
        /// What.
        value: u64,
        /// How.
        kind: StoreKind,
    },
    /// Load into a register.
    Load {
        /// The register (an index into [`Outcome::regs`]).
        reg: usize,
        /// Where from.
        loc: Loc,
        /// How.
        kind: LoadKind,
    },
    /// A read-modify-write: reads the newest write, writes `op`'s result right after it.
    Rmw {
        /// The register the value read goes to (`None`: a reduction, which returns nothing).
        reg: Option<usize>,
        /// Where.
        loc: Loc,
        /// What it writes.
        op: RmwOp,
        /// Its ordering.
        order: Order,
    },
    /// A fence.
    Fence(FenceKind),
}

/// What a read-modify-write writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RmwOp {
    /// The old value plus this.
    Add(u64),
    /// This.
    Exch(u64),
    /// This, if the old value was `expected` (else nothing: a failed compare-and-swap).
    Cas {
        /// The value that must be there.
        expected: u64,
        /// The value written if it is.
        new: u64,
    },
}

impl RmwOp {
    /// What it writes over `old` (`None`: nothing).
    pub fn apply(self, old: u64) -> Option<u64> {
        match self {
            RmwOp::Add(v) => Some(old.wrapping_add(v)),
            RmwOp::Exch(v) => Some(v),
            RmwOp::Cas { expected, new } => (old == expected).then_some(new),
        }
    }
}

impl Instr {
    fn loc(self) -> Option<Loc> {
        match self {
            Instr::Store { loc, .. } | Instr::Load { loc, .. } | Instr::Rmw { loc, .. } => {
                Some(loc)
            }
            Instr::Fence(_) => None,
        }
    }

    /// Whether `later` may be issued before `self`, the earlier instruction of its thread.
    fn may_pass(self, later: Instr) -> bool {
        let (Some(a), Some(b)) = (self.loc(), later.loc()) else {
            return false;
        };
        let acquire = matches!(
            self,
            Instr::Load {
                kind: LoadKind::Acquire,
                ..
            } | Instr::Rmw {
                order: Order::Acquire | Order::AcqRel,
                ..
            }
        );
        let release = matches!(
            later,
            Instr::Store {
                kind: StoreKind::Release,
                ..
            } | Instr::Rmw {
                order: Order::Release | Order::AcqRel,
                ..
            }
        );
        a != b && !acquire && !release
    }
}

/// A litmus program: its threads, its registers, and the locations whose final values count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// Each thread's instructions, in program order.
    pub threads: Vec<Vec<Instr>>,
    /// How many registers the loads write.
    pub regs: usize,
    /// The locations whose final values are part of the outcome.
    pub finals: Vec<Loc>,
}

/// What one run ended with.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Outcome {
    /// Every register, 0 if no load wrote it.
    pub regs: Vec<u64>,
    /// The final value of each of [`Program::finals`].
    pub finals: Vec<u64>,
}

/// Which memory a run has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Sequentially consistent: every load reads the newest write, every thread issues in
    /// program order; only the interleaving of threads is chosen.
    Sc,
    /// Weak: loads may read stale writes, stores be placed before newer ones, and unordered
    /// instructions of a thread issue out of order.
    Weak,
}

/// One run of a program.
#[derive(Clone, Debug)]
pub struct Run {
    /// What it ended with.
    pub outcome: Outcome,
    /// The order instructions were issued in: (thread, index in the thread).
    pub issued: Vec<(usize, usize)>,
    /// The memory at the end; its [`trace`](Machine::trace) has every step if `record` was set.
    pub machine: Machine,
}

/// Runs `program` once, every choice made by `ch`.
pub fn run(program: &Program, mode: Mode, record: bool, ch: &mut impl Chooser) -> Run {
    let weak = mode == Mode::Weak;
    let mut m = Machine::new(program.threads.len()).place_stores_anywhere(weak);
    if record {
        m = m.record();
    }
    let mut regs = vec![0; program.regs];
    let mut done: Vec<Vec<bool>> = program
        .threads
        .iter()
        .map(|t| vec![false; t.len()])
        .collect();
    let mut ready: Vec<(usize, usize)> = Vec::new();
    let mut latest = Newest;
    let mut issued = Vec::new();
    loop {
        ready.clear();
        for (t, instrs) in program.threads.iter().enumerate() {
            for (i, &ins) in instrs.iter().enumerate() {
                if done[t][i] {
                    continue;
                }
                let blocked = (0..i).any(|j| !done[t][j] && !instrs[j].may_pass(ins));
                if !blocked {
                    ready.push((t, i));
                }
                if !weak {
                    // In order: only the first pending instruction.
                    break;
                }
            }
        }
        if ready.is_empty() {
            break;
        }
        let (t, i) = ready[ch.choose(ready.len())];
        done[t][i] = true;
        issued.push((t, i));
        match program.threads[t][i] {
            Instr::Store { loc, value, kind } => {
                if weak {
                    m.store(t, loc, value, kind, ch);
                } else {
                    m.store(t, loc, value, kind, &mut latest);
                }
            }
            Instr::Load { reg, loc, kind } => {
                regs[reg] = if weak {
                    m.load(t, loc, kind, ch)
                } else {
                    m.load(t, loc, kind, &mut latest)
                };
            }
            Instr::Rmw {
                reg,
                loc,
                op,
                order,
            } => {
                let old = m.rmw(t, loc, order, |old| op.apply(old));
                if let Some(r) = reg {
                    regs[r] = old;
                }
            }
            Instr::Fence(kind) => m.fence(t, kind),
        }
    }
    let finals = program.finals.iter().map(|&l| m.latest(l)).collect();
    Run {
        outcome: Outcome { regs, finals },
        issued,
        machine: m,
    }
}

/// The chooser of a sequentially consistent run's memory: always the last possibility (the
/// newest write, the place after every write).
struct Newest;

impl Chooser for Newest {
    fn choose(&mut self, n: usize) -> usize {
        n.saturating_sub(1)
    }
}

/// Every outcome of every possible run of `program` on `mode`'s memory, each outcome as its
/// registers then its final values: the runs enumerated by an [`Exhaustive`] chooser, so a
/// missing outcome is one the machine can never give. Small programs only.
///
/// [`Exhaustive`]: super::Exhaustive
pub fn reachable(program: &Program, mode: Mode) -> std::collections::BTreeSet<Vec<u64>> {
    let mut ch = super::Exhaustive::new();
    let mut seen = std::collections::BTreeSet::new();
    loop {
        let o = run(program, mode, false, &mut ch).outcome;
        seen.insert([o.regs, o.finals].concat());
        if !ch.next_run() {
            return seen;
        }
    }
}
