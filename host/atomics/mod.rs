//! Every atomic operation, type, scope and ordering, checked against a sequential model.
//!
//! One [`Case`] is a value type, an [`AtomicOp`](gpu::checks::atomics::AtomicOp), a
//! [`Scope`](gpu::atomic::Scope) and an [`Order`](gpu::atomic::Order). [`check`] runs it once:
//! it draws fresh operands from a seed, launches `gpu::checks::atomics::atomics_check_<type>`
//! (thread `i` applies the operation to `targets[i % targets]` with `operands[i]` and writes the
//! value it saw into `olds[i]`), and [`validate`]s what came back. An atomic operation is
//! *linearizable*: the threads' operations on one address happened in some order, one at a
//! time. The model checks that such an order exists:
//!
//! | op | operands | what must hold, per target |
//! |---|---|---|
//! | add, sub, CAS-loop add | small positive integers (exact in floats too) | final = initial ± Σ; the olds, sorted, step from the initial value by each thread's operand |
//! | red add | as add | final = initial + Σ; each old is the thread's own operand (red returns nothing) |
//! | exch | distinct | {olds} ∪ {final} = {initial} ∪ {operands} |
//! | CAS (0 → operand) | distinct, nonzero; initial 0 | one thread saw 0; every other saw the winner's operand; final = it |
//! | store, then load | distinct | every old and the final value is a value some thread stored |
//! | min, max | any, negative included | final = min/max of all; each old is one of the inputs, ≥ final (min) / ≤ final (max) |
//! | and, or, xor | random bits, bit 0 clear | final = the fold; an `or` old lies between initial and final bitwise, an `and` old likewise |
//! | inc, dec (`limit`) | — | the olds are, as a multiset, those of the same number of sequential steps |
//!
//! The kernel writes nothing for a combination it does not support, so `olds` is poisoned with a
//! sentinel first and a few slots past `n` guard against a grid-stride loop that overruns.
//!
//! The simulator runs every case, but its atomics are all CPU atomics (system-strong): a scope
//! too narrow for the threads that share an address shows only on a GPU.
//!
//! Block scope: a block-scoped atomic is atomic only among the threads of one block, and thread
//! `i` works on `targets[i % targets]` whatever its block. Block-scope cases therefore run as a
//! single block of the shape's `threads_per_block`, whose grid-stride loop covers all `n`
//! operations: with several blocks on one address they would race under the PTX memory model
//! (a race no run is likely to show, since global atomics are performed in L2 — which is exactly
//! why the check must not rely on it).
//!
//! # Files
//!
//! | module | what |
//! |---|---|
//! | `cases` | [`ValueType`], [`Case`], [`all_cases`], [`CheckShape`] |
//! | `value` | [`Value`]: the six types as the model sees them, each with its typed launch |
//! | `inputs` | the operands and initial values of a run, drawn from a seed |
//! | `run` | [`launch_case`] and [`check`]: draw, launch, download, judge |
//! | `model` | [`CaseRun`] and [`validate`]: the sequential model above |
//! | [`demo`] | `gridsync atomics`: the table and the `f64` add, checked and timed |
//! | [`table`] | CUDA's table of atomic functions, each row summarized from the cases above |
//! | [`f64_add`] | `double` addition built from `atomicCAS` (the CUDA book's) next to native `atom.add.f64` |
//! | [`throughput`] | the throughput kernels of `gridsync bench atomics`, one checked launch at a time |

mod cases;
mod inputs;
mod model;
mod run;
mod value;

pub mod demo;
pub mod f64_add;
pub mod table;
pub mod throughput;

pub use cases::{Case, CheckShape, ValueType, all_cases, op_name, scope_name};
pub use model::{CaseRun, validate};
pub use run::{CaseReport, check, launch_case};
pub use value::Value;

/// At most this many contended addresses: the check is about contention, more only dilutes it.
pub const MAX_TARGETS: u32 = 1024;
/// At most this many operations per check: the inputs and the model live in host memory, and
/// this is over a hundred times the largest test grid.
pub const MAX_OPS: u32 = 1 << 22;
