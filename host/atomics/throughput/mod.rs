//! The throughput kernels of `gpu::bench::atomics`, one launch at a time, with a check of every
//! launch's counts: what `gridsync bench atomics` times, runnable (and tested) on the simulator.
//!
//! A [`ThroughputConfig`] is an operation ([`BenchOp`]), a [`Memory`], a [`Scope`] and a
//! [`Layout`] (how many threads share each address). Every thread does `iters` operations; the
//! counts that must come out are known exactly:
//!
//! | op | each word ends at (c = threads on it × iters) | the sinks |
//! |---|---|---|
//! | `add_u32` | c | sum to Σ c(c−1)/2 over the words (the olds of each word are 0 … c−1) |
//! | `red_add_u32` | c | each holds `iters` (red returns nothing; the kernel counts) |
//! | `add_f32` | min(c, 2²⁴) (adding 1.0 stalls at 2²⁴ in f32, in any order) | not checked |
//! | `cas_u32` | the number of successful CASes on it, ≤ c | each holds its thread's successes |

use super::cases::scope_name;
use crate::runtime::error::{Error, Result};
use gpu::atomic::Scope;
use serde::{Serialize, Serializer};

mod run;
pub use run::{ThroughputBuffers, ThroughputCheck, buffers, check, launch};

/// Threads per block of the full-GPU shape: eight warps.
pub const THREADS_PER_BLOCK: u32 = 256;
/// Untimed launches before the timed ones: clocks up, caches and TLBs warm.
pub const WARMUPS: u32 = 2;
/// Threads in a warp: the [`Layout::Warp`] grouping.
pub const WARP_SIZE: u32 = 32;
/// The largest integer `f32` counts to by adding 1.0: past 2²⁴, `x + 1.0 == x`.
const F32_COUNT_LIMIT: u64 = 1 << 24;
/// At most this many operations per launch: counts must fit a `u32` word.
pub const MAX_THROUGHPUT_OPS: u64 = u32::MAX as u64;

/// The operations `gridsync bench atomics` measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BenchOp {
    /// `atomicAdd(u32*, 1)`, result used: PTX `atom.add.u32`.
    AddU32,
    /// `atomicAdd(u32*, 1)`, result unused: PTX `red.add.u32`.
    RedAddU32,
    /// `atomicAdd(float*, 1.0f)`: PTX `atom.add.f32`.
    AddF32,
    /// `atomicCAS(u32*, guess, guess + 1)` in an increment loop, every attempt counted: PTX
    /// `atom.cas.b32`.
    CasU32,
}

impl BenchOp {
    /// Every operation.
    pub const ALL: [BenchOp; 4] = [
        BenchOp::AddU32,
        BenchOp::RedAddU32,
        BenchOp::AddF32,
        BenchOp::CasU32,
    ];

    /// `add_u32`, `red_add_u32`, `add_f32`, `cas_u32`.
    pub const fn name(self) -> &'static str {
        match self {
            BenchOp::AddU32 => "add_u32",
            BenchOp::RedAddU32 => "red_add_u32",
            BenchOp::AddF32 => "add_f32",
            BenchOp::CasU32 => "cas_u32",
        }
    }

    /// The PTX instruction without its scope: `atom.add.u32`, ….
    pub const fn ptx(self) -> &'static str {
        match self {
            BenchOp::AddU32 => "atom.add.u32",
            BenchOp::RedAddU32 => "red.add.u32",
            BenchOp::AddF32 => "atom.add.f32",
            BenchOp::CasU32 => "atom.cas.b32",
        }
    }
}

/// Where the words live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Memory {
    /// Device memory: atomics are performed in L2.
    Global,
    /// The block's shared memory: atomics are performed in the SM.
    Shared,
}

/// How many threads share each address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// Every thread of the grid on one word (global memory only): the most contended case.
    Grid,
    /// The threads of each block on one word.
    Block,
    /// The 32 lanes of each warp on one word.
    Warp,
    /// Each thread on its own word: no contention.
    Thread,
}

impl Layout {
    /// Every layout, most contended first.
    pub const ALL: [Layout; 4] = [Layout::Grid, Layout::Block, Layout::Warp, Layout::Thread];

    /// `grid`, `block`, `warp`, `thread`.
    pub const fn name(self) -> &'static str {
        match self {
            Layout::Grid => "grid",
            Layout::Block => "block",
            Layout::Warp => "warp",
            Layout::Thread => "thread",
        }
    }

    /// The kernels' `threads_per_address` for a grid of `threads` in blocks of `block`.
    pub const fn threads_per_address(self, threads: u32, block: u32) -> u32 {
        match self {
            Layout::Grid => threads,
            Layout::Block => block,
            Layout::Warp => WARP_SIZE,
            Layout::Thread => 1,
        }
    }
}

/// The grid of a throughput launch, and the operations each thread does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ThroughputShape {
    /// Blocks.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Operations per thread.
    pub iters: u32,
}

impl ThroughputShape {
    /// `blocks` × `threads_per_block` threads, `iters` operations each.
    pub const fn new(blocks: u32, threads_per_block: u32, iters: u32) -> ThroughputShape {
        ThroughputShape {
            blocks,
            threads_per_block,
            iters,
        }
    }

    /// Threads in the grid.
    pub const fn threads(&self) -> u64 {
        self.blocks as u64 * self.threads_per_block as u64
    }

    /// Operations per launch: threads × iters.
    pub const fn ops(&self) -> u64 {
        self.threads() * self.iters as u64
    }

    fn validate(&self) -> Result<()> {
        if self.blocks == 0 || self.threads_per_block == 0 || self.iters == 0 {
            return Err(Error::InvalidInput(format!(
                "{self:?}: blocks, threads per block and iters must be positive"
            )));
        }
        if self.ops() > MAX_THROUGHPUT_OPS {
            return Err(Error::InvalidInput(format!(
                "{self:?}: {} operations per launch; counts must fit a u32 (at most {MAX_THROUGHPUT_OPS})",
                self.ops()
            )));
        }
        Ok(())
    }
}

/// One measurement: operation, memory, scope and layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ThroughputConfig {
    /// The operation.
    pub op: BenchOp,
    /// Where its words live.
    pub memory: Memory,
    /// Its scope (block for shared memory).
    #[serde(serialize_with = "scope_as_name")]
    pub scope: Scope,
    /// How many threads share a word.
    pub layout: Layout,
}

impl ThroughputConfig {
    /// Whether the kernels have this combination and it is free of races: shared memory only
    /// at block scope and not across the grid; block scope on global memory only where one block
    /// alone touches each word (not [`Layout::Grid`]).
    pub fn is_valid(&self) -> bool {
        match self.memory {
            Memory::Shared => self.scope == Scope::Block && self.layout != Layout::Grid,
            Memory::Global => !(self.scope == Scope::Block && self.layout == Layout::Grid),
        }
    }

    /// `threads_per_address` for `shape`.
    pub fn threads_per_address(&self, shape: &ThroughputShape) -> u32 {
        let threads = u32::try_from(shape.threads()).unwrap_or(u32::MAX);
        self.layout
            .threads_per_address(threads, shape.threads_per_block)
    }

    /// Words per block (shared) or in all (global).
    fn words(&self, shape: &ThroughputShape) -> usize {
        let tpa = self.threads_per_address(shape) as u64;
        match self.memory {
            Memory::Global => shape.threads().div_ceil(tpa) as usize,
            Memory::Shared => (shape.threads_per_block as u64).div_ceil(tpa) as usize,
        }
    }
}

/// Serializes a scope as [`scope_name`] says it: `block`, `device`, `system`.
fn scope_as_name<S: Serializer>(scope: &Scope, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(scope_name(*scope))
}

/// Every valid configuration of every operation: per operation, global memory at device and
/// system scope on one word for the grid, at all three scopes per block, warp and thread; shared
/// memory at block scope per block, warp and thread.
pub fn all_configs() -> Vec<ThroughputConfig> {
    let mut out = Vec::new();
    for op in BenchOp::ALL {
        for memory in [Memory::Global, Memory::Shared] {
            for layout in Layout::ALL {
                for scope in Scope::ALL {
                    let c = ThroughputConfig {
                        op,
                        memory,
                        scope,
                        layout,
                    };
                    if c.is_valid() {
                        out.push(c);
                    }
                }
            }
        }
    }
    out
}
