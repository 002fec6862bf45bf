//! The Hopper checks of `gpu/src/checks/hopper.rs`, each launched and judged as
//! `tests/hopper.rs` does.

use super::{BLOCKS, THREADS};
use crate::check::Ran;
use gpu::LaunchConfig;
use gpu::checks::hopper::{self as h, BARRIER_BYTES, CLUSTER_CHECK_FIELDS};
use gridsync::Buffer;
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;

/// A bound far above any real wait in the Hopper checks: 2 s.
const HOPPER_TIMEOUT_NS: u64 = 2_000_000_000;

/// The Hopper checks of `gpu/src/checks/hopper.rs`, as `tests/hopper.rs` runs them.
#[derive(Clone, Copy, Debug)]
pub(super) enum Hopper {
    MbarrierPhases,
    BulkPipelineCopy,
    CpAsyncTransform,
    BulkStore,
    ClusterCheck,
    MbarrierRemote,
    WrongParity,
}

/// Clusters of the cluster checks: 3, so that 6 blocks are two of them.
pub(super) const CLUSTER: u32 = 3;

pub(super) fn hopper(t: &Target, which: Hopper) -> Result<Ran> {
    let err = t.zeros::<u32>(1)?;
    let ran = match which {
        Hopper::MbarrierPhases => mbarrier_phases(t, &err),
        Hopper::BulkPipelineCopy => bulk_pipeline_copy(t, &err),
        Hopper::CpAsyncTransform => cp_async_transform(t, &err),
        Hopper::BulkStore => bulk_store(t, &err),
        Hopper::ClusterCheck => cluster_check(t),
        Hopper::MbarrierRemote => mbarrier_remote(t, &err),
        Hopper::WrongParity => wrong_parity(t, &err),
    };
    let mismatch = |what: String| Err(Error::Mismatch(format!("{which:?}: {what}")));
    if let Err(Error::Mismatch(what)) = ran {
        return mismatch(what);
    }
    ran?;
    match t.download(&err)?[0] {
        0 => Ok(Ran::Finished),
        h::errors::TIMED_OUT => Ok(Ran::Stuck(format!("{which:?}: a wait timed out"))),
        e => mismatch(format!("error word {e:#x}")),
    }
}

/// A block of threads in clusters of [`CLUSTER`], with room for one `mbarrier`.
fn clustered(grid: u32, block: u32) -> LaunchConfig {
    LaunchConfig::linear(grid, block)
        .with_shared_bytes(16)
        .with_cluster(CLUSTER.into())
}

/// The error of a check whose result is wrong.
fn mismatched(what: String) -> Result<()> {
    Err(Error::Mismatch(what))
}

// SAFETY (every launch below): each buffer holds what the kernel's contract asks (the sizes are
// beside it), the shared memory is the kernel's, and every buffer outlives the launch.

/// [`Hopper::MbarrierPhases`].
fn mbarrier_phases(t: &Target, err: &Buffer<u32>) -> Result<()> {
    let (blocks, block, rounds) = (2u32, 33u32, 4u32);
    let out = t.zeros::<u32>((blocks * block) as usize)?;
    let cfg = LaunchConfig::linear(blocks, block).with_shared_bytes(BARRIER_BYTES + 4 * block);
    unsafe {
        gridsync::launch!(
            t,
            h::mbarrier_phases,
            cfg,
            (out.ptr(), rounds, 1u32, HOPPER_TIMEOUT_NS, err.ptr())
        )?
    };
    let got = t.download(&out)?;
    for (g, have) in got.iter().enumerate() {
        let right = (g as u32 % block + 1) % block;
        let want = (0..rounds).fold(0u32, |s, r| s.wrapping_add((r + 1) * 1000 + right));
        if *have != want {
            return mismatched(format!("thread {g}: {have}, not {want}"));
        }
    }
    Ok(())
}

/// [`Hopper::BulkPipelineCopy`].
fn bulk_pipeline_copy(t: &Target, err: &Buffer<u32>) -> Result<()> {
    let (len, stage_bytes, stages) = (1001usize, 64u32, 3u32);
    let src_words: Vec<u32> = (0..len.div_ceil(4) as u32)
        .map(|i| i.wrapping_mul(0x9e37_79b9))
        .collect();
    let src = t.upload(&src_words)?;
    let dst = t.zeros::<u8>(len)?;
    // A producer warp and consumers: at least 64 threads, here a partial third warp.
    let cfg =
        LaunchConfig::linear(BLOCKS, 72).with_shared_bytes(BARRIER_BYTES + stages * stage_bytes);
    unsafe {
        gridsync::launch!(
            t,
            h::bulk_pipeline_copy,
            cfg,
            (
                src.ptr().cast::<u8>().cast_const(),
                dst.ptr(),
                len as u64,
                stage_bytes,
                stages,
                HOPPER_TIMEOUT_NS,
                err.ptr()
            )
        )?
    };
    let bytes: Vec<u8> = src_words.iter().flat_map(|w| w.to_le_bytes()).collect();
    if t.download(&dst)?[..] != bytes[..len] {
        return mismatched("the copy differs from the source".into());
    }
    Ok(())
}

/// [`Hopper::CpAsyncTransform`].
fn cp_async_transform(t: &Target, err: &Buffer<u32>) -> Result<()> {
    let len = 1001usize;
    let input: Vec<u32> = (0..len.div_ceil(4) as u32 * 4)
        .map(|i| i.wrapping_mul(0x9e37_79b9))
        .collect();
    let src = t.upload(&input)?;
    let dst = t.zeros::<u32>(len)?;
    let cfg = LaunchConfig::linear(BLOCKS, THREADS).with_shared_bytes(BARRIER_BYTES + 32 * THREADS);
    unsafe {
        gridsync::launch!(
            t,
            h::cp_async_transform,
            cfg,
            (
                src.ptr().cast_const(),
                dst.ptr(),
                len as u64,
                HOPPER_TIMEOUT_NS,
                err.ptr()
            )
        )?
    };
    let got = t.download(&dst)?;
    if let Some(i) = (0..len).find(|&i| got[i] != input[i].wrapping_mul(3).wrapping_add(1)) {
        return mismatched(format!("word {i}"));
    }
    Ok(())
}

/// [`Hopper::BulkStore`].
fn bulk_store(t: &Target, err: &Buffer<u32>) -> Result<()> {
    // A multiple of 4: the bulk copy moves whole 16-byte pieces.
    let words = 100u32;
    let dst = t.zeros::<u32>((BLOCKS * words) as usize)?;
    let cfg = LaunchConfig::linear(BLOCKS, THREADS).with_shared_bytes(4 * words);
    unsafe { gridsync::launch!(t, h::bulk_store, cfg, (dst.ptr(), words, err.ptr()))? };
    let got = t.download(&dst)?;
    if let Some(k) =
        (0..got.len() as u32).find(|&k| got[k as usize] != (k / words) * 1_000_000 + k % words)
    {
        return mismatched(format!("word {k}"));
    }
    Ok(())
}

/// [`Hopper::ClusterCheck`].
fn cluster_check(t: &Target) -> Result<()> {
    let (grid, block) = (2 * CLUSTER, 33u32);
    let out = t.zeros::<u32>(grid as usize * CLUSTER_CHECK_FIELDS)?;
    unsafe { gridsync::launch!(t, h::cluster_check, clustered(grid, block), (out.ptr(),))? };
    let got = t.download(&out)?;
    for b in 0..grid {
        let row = &got[b as usize * CLUSTER_CHECK_FIELDS..][..CLUSTER_CHECK_FIELDS];
        let (rank, first) = (b % CLUSTER, b - b % CLUSTER);
        let value = |r: u32| 100 + first + r;
        let sum: u32 = (0..CLUSTER).map(value).sum();
        let want = [
            rank,
            CLUSTER,
            rank + 1000 * CLUSTER,
            b / CLUSTER,
            grid / CLUSTER,
            value((rank + 1) % CLUSTER),
            CLUSTER * block,
            sum - value(rank),
        ];
        if row != want {
            return mismatched(format!("block {b}: {row:?}, not {want:?}"));
        }
    }
    Ok(())
}

/// [`Hopper::MbarrierRemote`].
fn mbarrier_remote(t: &Target, err: &Buffer<u32>) -> Result<()> {
    let (grid, block) = (2 * CLUSTER, 33u32);
    let out = t.zeros::<u32>((grid / CLUSTER) as usize)?;
    unsafe {
        gridsync::launch!(
            t,
            h::mbarrier_remote,
            clustered(grid, block),
            (out.ptr(), HOPPER_TIMEOUT_NS, err.ptr())
        )?
    };
    if !t.download(&out)?.iter().all(|&v| v == 1) {
        return mismatched("a cluster's phase did not complete".into());
    }
    Ok(())
}

/// [`Hopper::WrongParity`].
fn wrong_parity(t: &Target, err: &Buffer<u32>) -> Result<()> {
    let cfg = LaunchConfig::linear(1, 1).with_shared_bytes(16);
    unsafe { gridsync::launch!(t, h::mbarrier_wrong_parity, cfg, (50_000_000u64, err.ptr()))? };
    Ok(())
}
