//! What is checked: the value types, the [`Case`]s (type × operation × scope × ordering) and
//! the [`CheckShape`] of a launch.

use super::{MAX_OPS, MAX_TARGETS};
use crate::runtime::error::{Error, Result};
use gpu::atomic::{Order, Scope};
use gpu::checks::atomics::AtomicOp;
use serde::{Serialize, Serializer};
use std::fmt;

/// The value types the check kernels are built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueType {
    /// `u32` (`unsigned int`): every operation, inc and dec included.
    U32,
    /// `i32` (`int`).
    I32,
    /// `u64` (`unsigned long long`).
    U64,
    /// `i64` (`long long`).
    I64,
    /// `f32` (`float`): add, sub, exch, CAS, store/load, red add, CAS-loop add.
    F32,
    /// `f64` (`double`): as `f32`.
    F64,
}

impl ValueType {
    /// Every type.
    pub const ALL: [ValueType; 6] = [
        ValueType::U32,
        ValueType::I32,
        ValueType::U64,
        ValueType::I64,
        ValueType::F32,
        ValueType::F64,
    ];

    /// The Rust name: `u32`, …, `f64`.
    pub const fn name(self) -> &'static str {
        match self {
            ValueType::U32 => "u32",
            ValueType::I32 => "i32",
            ValueType::U64 => "u64",
            ValueType::I64 => "i64",
            ValueType::F32 => "f32",
            ValueType::F64 => "f64",
        }
    }

    /// Whether CUDA (and the check kernel) has `op` for this type.
    pub const fn supports(self, op: AtomicOp) -> bool {
        use AtomicOp::*;
        let int = !matches!(self, ValueType::F32 | ValueType::F64);
        match op {
            Add | Sub | Exch | Cas | StoreLoad | RedAdd | CasLoopAdd => true,
            Min | Max | And | Or | Xor => int,
            Inc | Dec => matches!(self, ValueType::U32),
        }
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The operation's name in a [`Case`]: `add`, `store_load`, `cas_loop_add`, ….
pub const fn op_name(op: AtomicOp) -> &'static str {
    use AtomicOp::*;
    match op {
        Add => "add",
        Sub => "sub",
        Exch => "exch",
        Cas => "cas",
        StoreLoad => "store_load",
        RedAdd => "red_add",
        CasLoopAdd => "cas_loop_add",
        Min => "min",
        Max => "max",
        And => "and",
        Or => "or",
        Xor => "xor",
        Inc => "inc",
        Dec => "dec",
    }
}

/// The scope's name in a [`Case`]: `block`, `device` or `system`.
pub const fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::Block => "block",
        Scope::Device => "device",
        Scope::System => "system",
    }
}

/// One combination to check; displays as `u32 add device acq_rel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Case {
    /// The value type.
    pub ty: ValueType,
    /// The operation.
    pub op: AtomicOp,
    /// Its scope.
    pub scope: Scope,
    /// Its ordering (store/load and red add use the store half: release or relaxed).
    pub order: Order,
}

impl Case {
    /// Whether the check kernel supports this combination.
    pub const fn is_supported(&self) -> bool {
        self.ty.supports(self.op)
    }

    /// `Ok` if the check kernel supports this combination, else why not.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the operation CUDA lacks for the type.
    pub(crate) fn require_supported(&self) -> Result<()> {
        if self.is_supported() {
            Ok(())
        } else {
            Err(Error::InvalidInput(format!(
                "{self}: CUDA has no {} for {}",
                op_name(self.op),
                self.ty
            )))
        }
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {}",
            self.ty,
            op_name(self.op),
            scope_name(self.scope),
            self.order.ptx()
        )
    }
}

impl Serialize for Case {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Every supported (type, op, scope, order): 64 (type, op) pairs × 3 scopes × 4 orderings.
pub fn all_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for ty in ValueType::ALL {
        for op in AtomicOp::ALL.into_iter().filter(|op| ty.supports(*op)) {
            for scope in Scope::ALL {
                for order in Order::ALL {
                    cases.push(Case {
                        ty,
                        op,
                        scope,
                        order,
                    });
                }
            }
        }
    }
    cases
}

/// The launch and the work of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CheckShape {
    /// Blocks in the grid.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Operations (`n`); the kernel grid-strides, so any `n` fits any grid, 0 included.
    pub n: u32,
    /// Contended addresses, 1 to [`MAX_TARGETS`]; thread `i` works on `i % targets`.
    pub targets: u32,
}

impl CheckShape {
    /// `blocks × threads_per_block` threads, one operation each, on `targets` addresses.
    pub const fn new(blocks: u32, threads_per_block: u32, targets: u32) -> CheckShape {
        CheckShape {
            blocks,
            threads_per_block,
            n: blocks.saturating_mul(threads_per_block),
            targets,
        }
    }

    /// The same grid doing `n` operations.
    pub const fn with_n(self, n: u32) -> CheckShape {
        CheckShape { n, ..self }
    }

    /// `Ok` if the shape is one the check accepts.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for 0 or more than [`MAX_TARGETS`] targets, or more than
    /// [`MAX_OPS`] operations.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.targets == 0 || self.targets > MAX_TARGETS {
            return Err(Error::InvalidInput(format!(
                "{self}: targets must be 1 to {MAX_TARGETS}"
            )));
        }
        if self.n > MAX_OPS {
            return Err(Error::InvalidInput(format!(
                "{self}: at most {MAX_OPS} operations"
            )));
        }
        Ok(())
    }
}

impl fmt::Display for CheckShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (b, t, n, k) = (self.blocks, self.threads_per_block, self.n, self.targets);
        write!(
            f,
            "{b}×{t} threads, n = {n}, {k} target{}",
            if k == 1 { "" } else { "s" }
        )
    }
}
