//! The sequential model: what [`validate`] requires of one run, per operation (the table in the
//! [module docs](super)).

use super::cases::Case;
use super::value::Value;
use crate::runtime::error::{Error, Result};
use gpu::checks::atomics::AtomicOp;
use std::cmp::Ordering;
use std::collections::HashSet;

/// The inputs and outputs of one run of a case: what [`validate`] judges.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseRun<T> {
    /// The combination.
    pub case: Case,
    /// The `limit` of inc/dec (0 for the other operations).
    pub limit: u32,
    /// The targets before the launch, one per address.
    pub initial: Vec<T>,
    /// One per operation (`n` in all).
    pub operands: Vec<T>,
    /// The targets after the launch.
    pub finals: Vec<T>,
    /// What each thread saw; slots past `operands.len()` are a guard that must still hold
    /// [`Value::SENTINEL`].
    pub olds: Vec<T>,
}

/// Judges one run against the sequential model (the table in the [module docs](super)).
///
/// The inputs must be of the kind [`launch_case`](super::launch_case) draws for the operation: positive operands
/// for the additions, an initial 0 and nonzero operands for CAS, and none that could make a
/// thread's old value the [`Value::SENTINEL`] (which means "never written").
///
/// # Errors
/// [`Error::InvalidInput`] for an unsupported case, inconsistent lengths or inputs the model
/// does not cover; [`Error::Mismatch`] naming the case, the target, the thread, what it saw and
/// what was expected.
pub fn validate<T: Value>(run: &CaseRun<T>) -> Result<()> {
    let CaseRun {
        case,
        initial,
        operands,
        finals,
        olds,
        ..
    } = run;
    case.require_supported()?;
    let (n, k) = (operands.len(), initial.len());
    if T::TYPE != case.ty || k == 0 || finals.len() != k || olds.len() < n {
        return Err(Error::InvalidInput(format!(
            "{case}: a run of {} with {k} initial value(s), {} final(s), {n} operand(s) and {} old(s)",
            T::TYPE,
            finals.len(),
            olds.len()
        )));
    }
    let zero = |v: &T| v.bits() == 0;
    if case.op == AtomicOp::Cas && (!initial.iter().all(zero) || operands.iter().any(zero)) {
        return Err(Error::InvalidInput(format!(
            "{case}: the CAS model needs initial values 0, operands nonzero"
        )));
    }
    let mismatch = |what: String| Error::Mismatch(format!("{case}: {what}"));
    let poisoned = |i: &usize| olds[*i].bits() == T::SENTINEL.bits();
    if let Some(i) = (0..n).find(poisoned) {
        let t = i % k;
        return Err(mismatch(format!(
            "target {t}: thread {i} wrote nothing (its old is still the sentinel {:?})",
            T::SENTINEL
        )));
    }
    if let Some(i) = (n..olds.len()).find(|i| !poisoned(i)) {
        return Err(mismatch(format!(
            "olds[{i}], past n = {n}, was written: {:?}",
            olds[i]
        )));
    }
    for t in 0..k {
        let threads: Vec<usize> = (t..n).step_by(k).collect();
        let (init, last) = (initial[t], finals[t]);
        let result = if threads.is_empty() {
            same(last, init, || {
                "no thread touched it, yet its value changed".into()
            })
        } else {
            check_target(run, init, last, &threads)
        };
        result.map_err(|why| mismatch(format!("target {t} (initial {init:?}): {why}")))?;
    }
    Ok(())
}

/// `Ok` if `got` is bitwise `want`, else "`context`: got …, expected …".
fn same<T: Value>(got: T, want: T, context: impl FnOnce() -> String) -> Result<(), String> {
    if got.bits() == want.bits() {
        Ok(())
    } else {
        Err(format!(
            "{}: got {}, expected {want:?}",
            context(),
            show(got)
        ))
    }
}

/// The value, marked when it is the sentinel (the kernel never wrote that slot).
fn show<T: Value>(v: T) -> String {
    if v.bits() == T::SENTINEL.bits() {
        format!("{v:?} (the sentinel: never written)")
    } else {
        format!("{v:?}")
    }
}

/// The model for one target that `threads` (at least one) worked on; `last` is its final value.
fn check_target<T: Value>(
    run: &CaseRun<T>,
    init: T,
    last: T,
    threads: &[usize],
) -> Result<(), String> {
    use AtomicOp::*;
    let target = OneTarget {
        operands: &run.operands,
        olds: &run.olds,
        threads,
        init,
        last,
    };
    let op = run.case.op;
    match op {
        Add | Sub | CasLoopAdd => target.check_additions(op == Sub),
        RedAdd => target.check_red_add(),
        Exch => target.check_exch(),
        Cas => target.check_cas(),
        StoreLoad => target.check_store_load(),
        Min | Max => target.check_min_max(op),
        And | Or | Xor => target.check_bitwise(op),
        Inc | Dec => target.check_inc_dec(op, run.limit),
    }
}

/// One target of a run: the threads that worked on it, what they brought and saw, and its
/// value before and after.
struct OneTarget<'a, T> {
    operands: &'a [T],
    olds: &'a [T],
    threads: &'a [usize],
    init: T,
    last: T,
}

impl<T: Value> OneTarget<'_, T> {
    /// The initial value with every thread's operand folded in by `f`, in thread order.
    fn fold(&self, f: &dyn Fn(T, T) -> T) -> T {
        let operands = self.operands;
        self.threads
            .iter()
            .fold(self.init, |acc, &i| f(acc, operands[i]))
    }

    /// `Ok` if the final value is `want`.
    fn final_is(&self, want: T) -> Result<(), String> {
        same(self.last, want, || "final value".into())
    }

    /// The bit patterns of the olds of the target's threads.
    fn old_bits(&self) -> impl Iterator<Item = u64> + '_ {
        self.threads.iter().map(|&i| self.olds[i].bits())
    }

    /// Add, sub and the CAS-loop add: the sum, and olds that chain one operand apart.
    fn check_additions(&self, sub: bool) -> Result<(), String> {
        let (olds, operands) = (self.olds, self.operands);
        self.final_is(self.fold(if sub { &T::minus } else { &T::plus }))
            .map_err(|e| format!("{e} (a lost update?)"))?;
        // With positive operands the olds are monotone in the order the operations took
        // effect, so sorting them recovers that order; each must then be its predecessor
        // plus the predecessor's operand.
        let mut order = self.threads.to_vec();
        order.sort_by(|&a, &b| {
            if sub {
                olds[b].order(&olds[a])
            } else {
                olds[a].order(&olds[b])
            }
        });
        let mut expected = self.init;
        for &i in &order {
            same(olds[i], expected, || {
                format!("thread {i}, in the order the olds imply")
            })?;
            expected = if sub {
                expected.minus(operands[i])
            } else {
                expected.plus(operands[i])
            };
        }
        Ok(())
    }

    /// `red.add`: each old slot keeps its operand (red returns nothing), and the sum.
    fn check_red_add(&self) -> Result<(), String> {
        for &i in self.threads {
            same(self.olds[i], self.operands[i], || {
                format!("thread {i} (red returns nothing: its operand)")
            })?;
        }
        self.final_is(self.fold(&T::plus))
    }

    /// Exchange: the olds and the final value are the initial value and the operands,
    /// rearranged.
    fn check_exch(&self) -> Result<(), String> {
        same_multiset::<T>(
            self.old_bits().chain([self.last.bits()]).collect(),
            self.threads
                .iter()
                .map(|&i| self.operands[i].bits())
                .chain([self.init.bits()])
                .collect(),
            "the olds and the final value",
            "the initial value and the operands",
        )
    }

    /// CAS from 0: exactly one winner saw 0; the others saw, and the target holds, its operand.
    fn check_cas(&self) -> Result<(), String> {
        let winners: Vec<usize> = self
            .threads
            .iter()
            .copied()
            .filter(|&i| self.olds[i].bits() == 0)
            .collect();
        let [winner] = winners[..] else {
            return Err(format!(
                "threads {winners:?} saw 0 (won the CAS); exactly one must"
            ));
        };
        for &i in self.threads.iter().filter(|&&i| i != winner) {
            same(self.olds[i], self.operands[winner], || {
                format!("thread {i} (winner: thread {winner})")
            })?;
        }
        self.final_is(self.operands[winner])
    }

    /// Store then load: every value loaded, and the final one, is one some thread stored.
    fn check_store_load(&self) -> Result<(), String> {
        let stored: HashSet<u64> = self
            .threads
            .iter()
            .map(|&i| self.operands[i].bits())
            .collect();
        let known = |v: T, who: String| {
            if stored.contains(&v.bits()) {
                Ok(())
            } else {
                Err(format!("{who} {}, which no thread stored", show(v)))
            }
        };
        for &i in self.threads {
            known(self.olds[i], format!("thread {i} loaded"))?;
        }
        known(self.last, "the final value is".into())
    }

    /// Min and max: the extreme, and olds that are inputs not beyond it.
    fn check_min_max(&self, op: AtomicOp) -> Result<(), String> {
        let last = self.last;
        // The direction an old may not lie in from the final value.
        let beyond = if op == AtomicOp::Min {
            Ordering::Less
        } else {
            Ordering::Greater
        };
        self.final_is(self.fold(&|a, b| if b.order(&a) == beyond { b } else { a }))?;
        let inputs: HashSet<u64> = self
            .threads
            .iter()
            .map(|&i| self.operands[i].bits())
            .chain([self.init.bits()])
            .collect();
        for &i in self.threads {
            let old = self.olds[i];
            if !inputs.contains(&old.bits()) {
                return Err(format!(
                    "thread {i} saw {}, neither the initial value nor an operand",
                    show(old)
                ));
            }
            if old.order(&last) == beyond {
                return Err(format!(
                    "thread {i} saw {old:?}, beyond the final value {last:?}"
                ));
            }
        }
        Ok(())
    }

    /// And, or, xor: the folded value, and (and, or) olds bitwise between initial and final.
    fn check_bitwise(&self, op: AtomicOp) -> Result<(), String> {
        use AtomicOp::*;
        let f: fn(T, T) -> T = match op {
            And => |a, b| T::from_bits(a.bits() & b.bits()),
            Or => |a, b| T::from_bits(a.bits() | b.bits()),
            _ => |a, b| T::from_bits(a.bits() ^ b.bits()),
        };
        self.final_is(self.fold(&f))?;
        // Or only sets bits and and only clears them, so every old lies between the
        // initial and the final value, bitwise. Xor's olds have no such bound.
        let (below, above) = match op {
            Or => (self.init.bits(), self.last.bits()),
            And => (self.last.bits(), self.init.bits()),
            _ => return Ok(()),
        };
        for &i in self.threads {
            let old = self.olds[i].bits();
            if old & below != below || old & !above != 0 {
                return Err(format!(
                    "thread {i} saw {}, not between {:?} and {:?} bitwise",
                    show(self.olds[i]),
                    T::from_bits(below),
                    T::from_bits(above)
                ));
            }
        }
        Ok(())
    }

    /// Inc and dec with wrap at `limit`: the olds and the final value of a sequential run.
    fn check_inc_dec(&self, op: AtomicOp, limit: u32) -> Result<(), String> {
        // CUDA's atomicInc / atomicDec; every thread applies the same step, so the olds
        // are those of a sequential run whatever the order.
        let limit = limit as u64;
        let step = |v: u64| match op {
            AtomicOp::Inc if v >= limit => 0,
            AtomicOp::Inc => v + 1,
            _ if v == 0 || v > limit => limit,
            _ => v - 1,
        };
        let mut v = self.init.bits();
        let mut want = Vec::with_capacity(self.threads.len());
        for _ in self.threads {
            want.push(v);
            v = step(v);
        }
        self.final_is(T::from_bits(v))?;
        same_multiset::<T>(
            self.old_bits().collect(),
            want,
            "the olds",
            &format!(
                "{} sequential steps from the initial value (limit {limit})",
                self.threads.len()
            ),
        )
    }
}

/// `Ok` if `got` and `want` (bit patterns of `T`) hold the same values as often, else which
/// value differs.
fn same_multiset<T: Value>(
    mut got: Vec<u64>,
    mut want: Vec<u64>,
    got_name: &str,
    want_name: &str,
) -> Result<(), String> {
    got.sort_unstable();
    want.sort_unstable();
    // Both have one entry per thread (plus the same one more), so equal sorted means equal.
    let Some(k) = got.iter().zip(&want).position(|(a, b)| a != b) else {
        return Ok(());
    };
    let v = got[k].min(want[k]);
    let count = |xs: &[u64]| xs.iter().filter(|&&x| x == v).count();
    Err(format!(
        "{got_name} hold {} {} times, {want_name} {} times",
        show(T::from_bits(v)),
        count(&got),
        count(&want)
    ))
}
