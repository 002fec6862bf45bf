//! The tests, their variants and placements, and what the PTX memory model says of each
//! outcome.
//!
//! Every test here has one outcome that no interleaving of its threads can give — its *weak*
//! outcome, the `exists` clause of the literature's `.litmus` files — and every other outcome
//! is sequentially consistent. Whether the weak outcome is allowed depends on the variant (what
//! orders the accesses) and the placement (whether a fence's scope covers every thread):
//!
//! | test | weak outcome | forbidden by |
//! |---|---|---|
//! | MP | `1:r0=1 ∧ 1:r1=0` | release/acquire, an acq_rel or SC fence in scope |
//! | SB | `0:r0=0 ∧ 1:r0=0` | an SC fence in scope only |
//! | LB | `0:r0=1 ∧ 1:r0=1` | release/acquire, an acq_rel or SC fence in scope |
//! | CoRR | `1:r0=1 ∧ 1:r1=0` | any strong access (relaxed, volatile…): coherence |
//! | CoWW | `x=1` | always (one thread's own order) |
//! | S | `1:r0=1 ∧ x=2` | release/acquire, an acq_rel or SC fence in scope |
//! | R | `1:r0=0 ∧ y=2` | an SC fence in scope only |
//! | 2+2W | `x=1 ∧ y=1` | an SC fence in scope only |
//! | WRC | `1:r0=1 ∧ 2:r0=1 ∧ 2:r1=0` | release/acquire, an acq_rel or SC fence in scope |
//! | IRIW | `2:r0=1 ∧ 2:r1=0 ∧ 3:r0=1 ∧ 3:r1=0` | an SC fence in scope only |
//!
//! And the sources' pitfalls, as the same kind of test:
//!
//! | test | the pitfall | outcome counted | forbidden by |
//! |---|---|---|---|
//! | MP+lock | the lock without `threadfence` (the CUDA lock blog, Numba part 4): data written in the critical section, the lock released with `atomicExch`, taken with `atomicCAS`, the data read | `1:r0=1 ∧ 1:r1=0`: the lock taken, the data stale | as MP |
//! | MP+atomic | the grid-barrier article's counter: data written, arrival counted with an atomic add, the count polled, the data read | `1:r0=1 ∧ 1:r1=0`: the arrival seen, the data stale | as MP |
//! | slot-read | the neighbor-list mistake (CUDA book 9.3): `atomicAdd(&n, 1)`, then the slot read from `n` | `0:r0=2 ∧ 1:r0=2`: both threads take slot 2 | nothing: it is an interleaving |
//! | slot-ret | the fix: the slot is `atomicAdd`'s result | `0:r0=0 ∧ 1:r0=0`: both take slot 0 | always (atomicity) |
//!
//! Plain (weak) accesses are not "morally strong" in PTX: racing, they promise no coherence
//! between threads, so only CoWW's outcome (one thread's own stores) is forbidden for them. A
//! `.cta` fence covers the threads of one block: placed in different blocks, a test's fences do
//! not synchronize, and its weak outcome is allowed (PTX ISA, "Memory Consistency Model":
//! morally strong operations, causality order, and the SB/LB/MP examples there).

use super::variant::Strength;
pub use super::variant::{Placement, Variant};
use gpu::atomic::Order;
use gpu::lessons::litmus::{
    LITMUS_MAX_THREADS, LITMUS_OPS, LITMUS_PROGRAM_WORDS, OP_ADD, OP_CAS, OP_EXCH, OP_LOAD, OP_RED,
    OP_STORE,
};
use gpu::sim::weak::{Instr, Loc, Program, RmwOp};
use serde::{Deserialize, Serialize};

/// A litmus test's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Test {
    /// Message passing: data, then flag; the reader sees the flag and stale data.
    MP,
    /// Store buffering: each thread stores, then loads the other's location; both see 0.
    SB,
    /// Load buffering: each loads, then stores what the other loads; both see the other's store.
    LB,
    /// Read-read coherence: a thread reads a new value, then the older one.
    CoRR,
    /// Write-write coherence: two stores of one thread end in the wrong order.
    CoWW,
    /// S: a store ordered after a read of a flag is overwritten by the store before the flag.
    S,
    /// R: a store-store thread and a store-load thread; the load misses the first store.
    R,
    /// 2+2W: two threads each store two locations in opposite orders; both first stores win.
    TwoPlusTwoW,
    /// Write-to-read causality: a value passed on through a third thread arrives ahead of
    /// itself.
    WRC,
    /// Independent reads of independent writes: two readers see two stores in opposite orders.
    IRIW,
    /// MP through a lock: the unlock an `atomicExch`, the lock an `atomicCAS` (the lock
    /// without `threadfence`).
    MpLock,
    /// MP through an atomic counter: the flag an `atomicAdd` (the grid-barrier article's
    /// arrival).
    MpAtomic,
    /// The neighbor-list mistake: `atomicAdd(&n, 1)`, then the slot read from `n`.
    SlotRead,
    /// Its fix: the slot is `atomicAdd`'s result.
    SlotRet,
}

/// One operation of a test's thread: location 0 is `x`, 1 is `y`; stores write 1 or 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    St(u32, u32),
    Ld(u32),
    /// `atomicAdd`, returning the old value.
    Add(u32, u32),
    /// An atomic add returning nothing.
    Red(u32, u32),
    /// `atomicExch`, returning the old value.
    Exch(u32, u32),
    /// `atomicCAS(p, 1, value)`, returning the old value.
    Cas(u32, u32),
}

impl Op {
    /// Whether it writes a register.
    fn returns(self) -> bool {
        matches!(self, Op::Ld(_) | Op::Add(..) | Op::Exch(..) | Op::Cas(..))
    }

    /// (kind, location, value) in the kernel's program table.
    fn table(self) -> [u32; 3] {
        match self {
            Op::St(l, v) => [OP_STORE, l, v],
            Op::Ld(l) => [OP_LOAD, l, 0],
            Op::Add(l, v) => [OP_ADD, l, v],
            Op::Red(l, v) => [OP_RED, l, v],
            Op::Exch(l, v) => [OP_EXCH, l, v],
            Op::Cas(l, v) => [OP_CAS, l, v],
        }
    }
}

/// What the model says of an outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Some interleaving of the threads gives it.
    Sc,
    /// The test's weak outcome, allowed for this variant and placement.
    WeakAllowed,
    /// The test's weak outcome where the model forbids it, or a value no run can give.
    Forbidden,
}

impl Test {
    /// Every test: the literature's, then the sources' pitfalls.
    pub const ALL: [Test; 14] = [
        Test::MP,
        Test::SB,
        Test::LB,
        Test::CoRR,
        Test::CoWW,
        Test::S,
        Test::R,
        Test::TwoPlusTwoW,
        Test::WRC,
        Test::IRIW,
        Test::MpLock,
        Test::MpAtomic,
        Test::SlotRead,
        Test::SlotRet,
    ];

    /// The name the literature uses.
    pub const fn name(self) -> &'static str {
        match self {
            Test::MP => "MP",
            Test::SB => "SB",
            Test::LB => "LB",
            Test::CoRR => "CoRR",
            Test::CoWW => "CoWW",
            Test::S => "S",
            Test::R => "R",
            Test::TwoPlusTwoW => "2+2W",
            Test::WRC => "WRC",
            Test::IRIW => "IRIW",
            Test::MpLock => "MP+lock",
            Test::MpAtomic => "MP+atomic",
            Test::SlotRead => "slot-read",
            Test::SlotRet => "slot-ret",
        }
    }

    /// The test named `name` (case-insensitive).
    pub fn from_name(name: &str) -> Option<Test> {
        Test::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// The threads' operations, without fences.
    fn shape(self) -> Vec<Vec<Op>> {
        use Op::*;
        const X: u32 = 0;
        const Y: u32 = 1;
        match self {
            Test::MP => vec![vec![St(X, 1), St(Y, 1)], vec![Ld(Y), Ld(X)]],
            Test::SB => vec![vec![St(X, 1), Ld(Y)], vec![St(Y, 1), Ld(X)]],
            Test::LB => vec![vec![Ld(X), St(Y, 1)], vec![Ld(Y), St(X, 1)]],
            Test::CoRR => vec![vec![St(X, 1)], vec![Ld(X), Ld(X)]],
            Test::CoWW => vec![vec![St(X, 1), St(X, 2)]],
            Test::S => vec![vec![St(X, 2), St(Y, 1)], vec![Ld(Y), St(X, 1)]],
            Test::R => vec![vec![St(X, 1), St(Y, 1)], vec![St(Y, 2), Ld(X)]],
            Test::TwoPlusTwoW => vec![vec![St(X, 1), St(Y, 2)], vec![St(Y, 1), St(X, 2)]],
            Test::WRC => vec![vec![St(X, 1)], vec![Ld(X), St(Y, 1)], vec![Ld(Y), Ld(X)]],
            Test::IRIW => vec![
                vec![St(X, 1)],
                vec![St(Y, 1)],
                vec![Ld(X), Ld(Y)],
                vec![Ld(Y), Ld(X)],
            ],
            // y is the lock word: 0 held by thread 0, 1 free, 2 taken by thread 1.
            Test::MpLock => vec![vec![St(X, 1), Exch(Y, 1)], vec![Cas(Y, 2), Ld(X)]],
            Test::MpAtomic => vec![vec![St(X, 1), Add(Y, 1)], vec![Ld(Y), Ld(X)]],
            Test::SlotRead => vec![vec![Red(X, 1), Ld(X)], vec![Red(X, 1), Ld(X)]],
            Test::SlotRet => vec![vec![Add(X, 1)], vec![Add(X, 1)]],
        }
    }

    /// The threads.
    pub fn threads(self) -> usize {
        self.shape().len()
    }

    /// The locations whose final values are part of the outcome (bit 0: `x`, bit 1: `y`).
    pub const fn finals_mask(self) -> u32 {
        match self {
            Test::CoWW | Test::S => 0b01,
            Test::R => 0b10,
            Test::TwoPlusTwoW => 0b11,
            _ => 0,
        }
    }

    /// The name of each digit of an outcome: `t:rN` for the `N`th load of thread `t`, then
    /// `x`, `y` for final values.
    pub fn digit_names(self) -> Vec<String> {
        let mut names = Vec::new();
        for (t, ops) in self.shape().iter().enumerate() {
            let loads = ops.iter().filter(|op| op.returns()).count();
            names.extend((0..loads).map(|n| format!("{t}:r{n}")));
        }
        for (bit, name) in [(1, "x"), (2, "y")] {
            if self.finals_mask() & bit != 0 {
                names.push(name.to_string());
            }
        }
        names
    }

    /// The outcome the test counts, digit by digit (see [`Test::digit_names`]): its weak
    /// outcome, or for `slot-read` the pitfall's (which is an interleaving).
    pub fn weak_outcome(self) -> Vec<u64> {
        match self {
            Test::MpLock | Test::MpAtomic => vec![0, 1, 0],
            Test::SlotRead => vec![2, 2],
            Test::SlotRet => vec![0, 0],
            Test::MP | Test::CoRR => vec![1, 0],
            Test::SB => vec![0, 0],
            Test::LB => vec![1, 1],
            Test::CoWW => vec![1],
            Test::S => vec![1, 2],
            Test::R => vec![0, 2],
            Test::TwoPlusTwoW => vec![1, 1],
            Test::WRC => vec![1, 1, 0],
            Test::IRIW => vec![1, 0, 1, 0],
        }
    }

    /// Whether the model forbids the weak outcome for `variant`, with the threads at
    /// `placement` (`None`: every scope covers every thread, as in the simulator).
    pub fn forbidden(self, variant: Variant, placement: Option<Placement>) -> bool {
        let in_block = !matches!(
            placement,
            Some(Placement::SameSm | Placement::DifferentSms | Placement::DifferentGpus)
        );
        let in_gpu = placement != Some(Placement::DifferentGpus);
        // What orders the two accesses of a thread, once scopes are accounted for (across GPUs
        // the accesses are `.sys`, the fences keep their scope).
        let order = match variant {
            Variant::Plain => Strength::None,
            Variant::Volatile | Variant::Relaxed => Strength::Coherent,
            Variant::ReleaseAcquire | Variant::FenceAcqRelSys => Strength::Causal,
            Variant::FenceScSys => Strength::Sc,
            Variant::FenceAcqRelGpu if in_gpu => Strength::Causal,
            Variant::FenceScGpu if in_gpu => Strength::Sc,
            Variant::FenceAcqRelCta if in_block => Strength::Causal,
            Variant::FenceScCta if in_block => Strength::Sc,
            Variant::FenceAcqRelCta
            | Variant::FenceScCta
            | Variant::FenceAcqRelGpu
            | Variant::FenceScGpu => Strength::Coherent,
        };
        match self {
            Test::CoWW | Test::SlotRet => true,
            Test::SlotRead => false,
            Test::MpLock | Test::MpAtomic => order >= Strength::Causal,
            Test::CoRR => order >= Strength::Coherent,
            Test::MP | Test::LB | Test::S | Test::WRC => order >= Strength::Causal,
            Test::SB | Test::R | Test::TwoPlusTwoW | Test::IRIW => order >= Strength::Sc,
        }
    }

    /// The program table the litmus kernel reads ([`LITMUS_PROGRAM_WORDS`] words).
    pub fn table(self) -> Vec<u32> {
        let shape = self.shape();
        let mut words = vec![0; LITMUS_PROGRAM_WORDS as usize];
        words[0] = shape.len() as u32;
        words[1] = self.finals_mask();
        for (t, ops) in shape.iter().enumerate() {
            for (k, op) in ops.iter().enumerate().take(LITMUS_OPS as usize) {
                let at = 2 + (t * LITMUS_OPS as usize + k) * 3;
                words[at..at + 3].copy_from_slice(&op.table());
            }
        }
        debug_assert!(shape.len() <= LITMUS_MAX_THREADS as usize);
        words
    }

    /// The test as a program of the weak simulator, with `variant`'s accesses and fences.
    /// Registers are numbered as the outcome's digits; final values follow them.
    pub fn program(self, variant: Variant) -> Program {
        let (load, store, fence) = variant.simulated();
        let rmw = variant.rmw_order();
        let mut regs = 0;
        let mut next_reg = || {
            regs += 1;
            regs - 1
        };
        let threads = self
            .shape()
            .iter()
            .map(|ops| {
                let mut instrs = Vec::new();
                for (k, &op) in ops.iter().enumerate() {
                    if k > 0
                        && let Some(f) = fence
                    {
                        instrs.push(Instr::Fence(f));
                    }
                    let at = |l: u32| Loc::from(l);
                    let rmw_instr = |reg, loc: u32, op, order| Instr::Rmw {
                        reg,
                        loc: at(loc),
                        op,
                        order,
                    };
                    instrs.push(match op {
                        Op::St(loc, v) => Instr::Store {
                            loc: at(loc),
                            value: v.into(),
                            kind: store,
                        },
                        Op::Ld(loc) => Instr::Load {
                            reg: next_reg(),
                            loc: at(loc),
                            kind: load,
                        },
                        Op::Add(loc, v) => {
                            rmw_instr(Some(next_reg()), loc, RmwOp::Add(v.into()), rmw)
                        }
                        Op::Red(loc, v) => {
                            let order = if rmw == Order::AcqRel {
                                Order::Release
                            } else {
                                rmw
                            };
                            rmw_instr(None, loc, RmwOp::Add(v.into()), order)
                        }
                        Op::Exch(loc, v) => {
                            rmw_instr(Some(next_reg()), loc, RmwOp::Exch(v.into()), rmw)
                        }
                        Op::Cas(loc, v) => rmw_instr(
                            Some(next_reg()),
                            loc,
                            RmwOp::Cas {
                                expected: 1,
                                new: v.into(),
                            },
                            rmw,
                        ),
                    });
                }
                instrs
            })
            .collect();
        let finals = [(1, 0), (2, 1)]
            .into_iter()
            .filter(|&(bit, _)| self.finals_mask() & bit != 0)
            .map(|(_, loc)| loc)
            .collect();
        Program {
            threads,
            regs,
            finals,
        }
    }
}

super::variant::from_str! {
    Test, "litmus test";
}
