//! Allocating, launching and checking one throughput configuration.

use super::{BenchOp, F32_COUNT_LIMIT, Memory, ThroughputConfig, ThroughputShape};
use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use gpu::LaunchConfig;
use gpu::atomic::Scope;
use serde::Serialize;

/// The buffers of one configuration: its words (f32 words as their bits) and the sinks.
pub struct ThroughputBuffers {
    /// The words (shared: the blocks' words as copied out).
    pub words: Buffer<u32>,
    /// One per thread.
    pub sink: Buffer<u32>,
}

/// Allocates zeroed buffers for `config` at `shape`.
///
/// # Errors
/// [`Error::InvalidInput`] for an invalid configuration or shape; an allocation error.
pub fn buffers(
    target: &Target,
    config: &ThroughputConfig,
    shape: &ThroughputShape,
) -> Result<ThroughputBuffers> {
    validate(config, shape)?;
    let words = match config.memory {
        Memory::Global => config.words(shape),
        Memory::Shared => config.words(shape) * shape.blocks as usize,
    };
    Ok(ThroughputBuffers {
        words: target.zeros(words)?,
        sink: target.zeros(shape.threads() as usize)?,
    })
}

fn validate(config: &ThroughputConfig, shape: &ThroughputShape) -> Result<()> {
    if !config.is_valid() {
        return Err(Error::InvalidInput(format!(
            "{config:?}: block scope is for words one block alone touches, shared memory for one block"
        )));
    }
    shape.validate()
}

/// Launches `config` once on `shape` with `bufs` (from [`buffers`] for the same configuration
/// and shape); on a GPU it returns once queued.
///
/// # Errors
/// [`Error::InvalidInput`] for an invalid configuration or shape, or buffers of another size;
/// a launch error.
pub fn launch(
    target: &Target,
    config: &ThroughputConfig,
    shape: &ThroughputShape,
    bufs: &ThroughputBuffers,
) -> Result<()> {
    validate(config, shape)?;
    let words_per_block = config.words(shape);
    let want_words = match config.memory {
        Memory::Global => words_per_block,
        Memory::Shared => words_per_block * shape.blocks as usize,
    };
    if bufs.words.len() != want_words || bufs.sink.len() as u64 != shape.threads() {
        return Err(Error::InvalidInput(format!(
            "{config:?}: buffers of {} words and {} sinks, expected {want_words} and {}",
            bufs.words.len(),
            bufs.sink.len(),
            shape.threads()
        )));
    }
    let mut cfg = LaunchConfig::linear(shape.blocks, shape.threads_per_block);
    if config.memory == Memory::Shared {
        cfg = cfg.with_shared_bytes((words_per_block * size_of::<u32>()) as u32);
    }
    let args = (
        bufs.words.ptr(),
        config.threads_per_address(shape),
        shape.iters,
        bufs.sink.ptr(),
    );
    let f32_args = (args.0.cast::<f32>(), args.1, args.2, args.3);
    use gpu::bench::atomics as k;
    use {BenchOp::*, Memory::*, Scope::*};
    // SAFETY: `words` has `⌈threads / threads_per_address⌉` words (global) or that many per
    // block (shared, with as many words of dynamic shared memory), `sink` one slot per thread
    // (checked above): the kernels' launch contract. An f32 word is a u32's size and alignment,
    // and any bits are a valid f32. The buffers outlive the launch: the caller synchronizes (a
    // download or `Target::synchronize`) before dropping them.
    unsafe {
        macro_rules! go {
            ($kernel:path, $args:expr) => {{
                let (w, t, i, s) = $args;
                crate::launch!(target, $kernel, cfg, (w, t, i, s))
            }};
        }
        match (config.op, config.memory, config.scope) {
            (AddU32, Global, Block) => go!(k::atomic_bench_add_u32_global_block, args),
            (AddU32, Global, Device) => go!(k::atomic_bench_add_u32_global_device, args),
            (AddU32, Global, System) => go!(k::atomic_bench_add_u32_global_system, args),
            (AddU32, Shared, _) => go!(k::atomic_bench_add_u32_shared_block, args),
            (RedAddU32, Global, Block) => go!(k::atomic_bench_red_add_u32_global_block, args),
            (RedAddU32, Global, Device) => go!(k::atomic_bench_red_add_u32_global_device, args),
            (RedAddU32, Global, System) => go!(k::atomic_bench_red_add_u32_global_system, args),
            (RedAddU32, Shared, _) => go!(k::atomic_bench_red_add_u32_shared_block, args),
            (AddF32, Global, Block) => go!(k::atomic_bench_add_f32_global_block, f32_args),
            (AddF32, Global, Device) => go!(k::atomic_bench_add_f32_global_device, f32_args),
            (AddF32, Global, System) => go!(k::atomic_bench_add_f32_global_system, f32_args),
            (AddF32, Shared, _) => go!(k::atomic_bench_add_f32_shared_block, f32_args),
            (CasU32, Global, Block) => go!(k::atomic_bench_cas_u32_global_block, args),
            (CasU32, Global, Device) => go!(k::atomic_bench_cas_u32_global_device, args),
            (CasU32, Global, System) => go!(k::atomic_bench_cas_u32_global_system, args),
            (CasU32, Shared, _) => go!(k::atomic_bench_cas_u32_shared_block, args),
        }
    }
}

/// What one checked launch did.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ThroughputCheck {
    /// Words the threads shared (in all blocks, for shared memory).
    pub words: usize,
    /// Operations performed (attempts, for CAS).
    pub ops: u64,
    /// The CAS attempts that succeeded, as a fraction of all (CAS only).
    pub cas_success: Option<f64>,
}

/// Launches `config` once on fresh zeroed buffers and checks every count (the table in the
/// [module docs](super)).
///
/// # Errors
/// What [`buffers`] and [`launch`] return; [`Error::Mismatch`] naming the word or sink that is
/// off.
pub fn check(
    target: &Target,
    config: &ThroughputConfig,
    shape: &ThroughputShape,
) -> Result<ThroughputCheck> {
    let bufs = buffers(target, config, shape)?;
    launch(target, config, shape, &bufs)?;
    let words = target.download(&bufs.words)?;
    let sinks = target.download(&bufs.sink)?;
    verify(config, shape, &words, &sinks)
}

/// The threads that work on word `w` of `words` (global) or of each block's words (shared).
fn threads_on(
    config: &ThroughputConfig,
    shape: &ThroughputShape,
    w: usize,
) -> std::ops::Range<u64> {
    let tpa = config.threads_per_address(shape) as u64;
    let per_block = config.words(shape);
    let (base, limit, local) = match config.memory {
        Memory::Global => (0, shape.threads(), w as u64),
        Memory::Shared => {
            let block = (w / per_block) as u64;
            let tpb = shape.threads_per_block as u64;
            (block * tpb, (block + 1) * tpb, (w % per_block) as u64)
        }
    };
    let start = base + local * tpa;
    start..(start + tpa).min(limit)
}

fn verify(
    config: &ThroughputConfig,
    shape: &ThroughputShape,
    words: &[u32],
    sinks: &[u32],
) -> Result<ThroughputCheck> {
    let iters = shape.iters as u64;
    let mismatch = |what: String| Err(Error::Mismatch(format!("{config:?}, {shape:?}: {what}")));
    let mut want_sink_sum = 0u32;
    let mut successes = 0u64;
    for (w, &word) in words.iter().enumerate() {
        let threads = threads_on(config, shape, w);
        let c = (threads.end - threads.start) * iters;
        let got_ok = match config.op {
            BenchOp::AddU32 | BenchOp::RedAddU32 => word as u64 == c,
            BenchOp::AddF32 => f32::from_bits(word) == c.min(F32_COUNT_LIMIT) as f32,
            BenchOp::CasU32 => {
                let won: u64 = threads.clone().map(|t| sinks[t as usize] as u64).sum();
                successes += won;
                word as u64 == won && won <= c
            }
        };
        if !got_ok {
            let shown = match config.op {
                BenchOp::AddF32 => format!("{}", f32::from_bits(word)),
                _ => word.to_string(),
            };
            return mismatch(format!(
                "word {w} (threads {threads:?}, {c} operations) holds {shown}"
            ));
        }
        // The olds of one word are 0, 1, …, c − 1 in some order.
        want_sink_sum = want_sink_sum.wrapping_add((c * c.saturating_sub(1) / 2) as u32);
    }
    match config.op {
        BenchOp::AddU32 => {
            let got = sinks.iter().fold(0u32, |a, &s| a.wrapping_add(s));
            if got != want_sink_sum {
                return mismatch(format!(
                    "the olds sum to {got}, expected {want_sink_sum} (mod 2^32)"
                ));
            }
        }
        BenchOp::RedAddU32 => {
            if let Some(t) = sinks.iter().position(|&s| s != shape.iters) {
                return mismatch(format!("thread {t} counted {} operations", sinks[t]));
            }
        }
        BenchOp::AddF32 | BenchOp::CasU32 => {}
    }
    Ok(ThroughputCheck {
        words: words.len(),
        ops: shape.ops(),
        cas_success: (config.op == BenchOp::CasU32).then(|| successes as f64 / shape.ops() as f64),
    })
}
