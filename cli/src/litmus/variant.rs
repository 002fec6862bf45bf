//! The variants (how a test's accesses are made and fenced) and placements (where its threads
//! run), and how strongly each variant orders a thread's two accesses.

use gpu::atomic::Order;
use gpu::lessons::litmus::{
    PLACE_DIFFERENT_GPUS, PLACE_DIFFERENT_SMS, PLACE_SAME_BLOCK, PLACE_SAME_SM, PLACE_SAME_WARP,
};
use gpu::sim::weak::{FenceKind, LoadKind, StoreKind};
use serde::{Deserialize, Serialize};

/// How the accesses of a test are made, and what goes between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// Plain loads and stores (`ld`, `st`: `.weak`), as `*p` in CUDA.
    Plain,
    /// `ld.volatile`, `st.volatile`: the sources' `volatile` (relaxed at system scope).
    Volatile,
    /// `ld.relaxed.gpu`, `st.relaxed.gpu`: what `atomic::load`/`store` with `Relaxed` emit.
    Relaxed,
    /// `st.release.gpu` stores, `ld.acquire.gpu` loads.
    ReleaseAcquire,
    /// Relaxed accesses with `fence.acq_rel.cta` between.
    FenceAcqRelCta,
    /// Relaxed accesses with `fence.acq_rel.gpu` between.
    FenceAcqRelGpu,
    /// Relaxed accesses with `fence.acq_rel.sys` between.
    FenceAcqRelSys,
    /// Relaxed accesses with `fence.sc.cta` between (`__threadfence_block`).
    FenceScCta,
    /// Relaxed accesses with `fence.sc.gpu` between (`__threadfence`).
    FenceScGpu,
    /// Relaxed accesses with `fence.sc.sys` between (`__threadfence_system`).
    FenceScSys,
}

/// Where the threads of one instance run.
///
/// On one GPU the variants' atomic accesses and read-modify-writes are at `.gpu` scope; across
/// GPUs at `.sys` (the narrowest scope that holds both threads), while the fences keep the
/// scope their variant names — so a `.gpu` fence there orders nothing for the other GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Lanes of one warp.
    SameWarp,
    /// Warps of one block.
    SameBlock,
    /// Blocks on one SM.
    SameSm,
    /// Blocks on different SMs.
    DifferentSms,
    /// Grids on different GPUs (one per GPU, the locations in the first one's memory).
    DifferentGpus,
}

/// How strongly a variant orders a thread's two accesses, weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Strength {
    /// Not even coherence between threads (plain accesses).
    None,
    /// Coherent, unordered (relaxed, volatile, a fence out of scope).
    Coherent,
    /// Release/acquire: synchronizes through the value read.
    Causal,
    /// SC fences: also ordered with each other.
    Sc,
}

impl Variant {
    /// Every variant, weakest first.
    pub const ALL: [Variant; 10] = [
        Variant::Plain,
        Variant::Volatile,
        Variant::Relaxed,
        Variant::ReleaseAcquire,
        Variant::FenceAcqRelCta,
        Variant::FenceAcqRelGpu,
        Variant::FenceAcqRelSys,
        Variant::FenceScCta,
        Variant::FenceScGpu,
        Variant::FenceScSys,
    ];

    /// The short name used on the command line and in tables.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Plain => "plain",
            Variant::Volatile => "volatile",
            Variant::Relaxed => "relaxed",
            Variant::ReleaseAcquire => "rel-acq",
            Variant::FenceAcqRelCta => "acq_rel.cta",
            Variant::FenceAcqRelGpu => "acq_rel.gpu",
            Variant::FenceAcqRelSys => "acq_rel.sys",
            Variant::FenceScCta => "sc.cta",
            Variant::FenceScGpu => "sc.gpu",
            Variant::FenceScSys => "sc.sys",
        }
    }

    /// The variant named `name`.
    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }

    /// The number the kernel's `variant` parameter takes: the device crate's `VARIANT_*`.
    pub const fn code(self) -> u32 {
        use gpu::lessons::litmus as k;
        match self {
            Variant::Plain => k::VARIANT_PLAIN,
            Variant::Volatile => k::VARIANT_VOLATILE,
            Variant::Relaxed => k::VARIANT_RELAXED,
            Variant::ReleaseAcquire => k::VARIANT_RELEASE_ACQUIRE,
            Variant::FenceAcqRelCta => k::VARIANT_FENCE_ACQ_REL_CTA,
            Variant::FenceAcqRelGpu => k::VARIANT_FENCE_ACQ_REL_GPU,
            Variant::FenceAcqRelSys => k::VARIANT_FENCE_ACQ_REL_SYS,
            Variant::FenceScCta => k::VARIANT_FENCE_SC_CTA,
            Variant::FenceScGpu => k::VARIANT_FENCE_SC_GPU,
            Variant::FenceScSys => k::VARIANT_FENCE_SC_SYS,
        }
    }

    /// The ordering of the test's read-modify-writes under this variant (as the kernel's).
    pub(super) fn rmw_order(self) -> Order {
        if self == Variant::ReleaseAcquire {
            Order::AcqRel
        } else {
            Order::Relaxed
        }
    }

    /// The weak simulator's load, store and fence for this variant (scopes are not simulated).
    pub(super) fn simulated(self) -> (LoadKind, StoreKind, Option<FenceKind>) {
        match self {
            Variant::Plain => (LoadKind::Weak, StoreKind::Weak, None),
            Variant::Volatile | Variant::Relaxed => (LoadKind::Relaxed, StoreKind::Relaxed, None),
            Variant::ReleaseAcquire => (LoadKind::Acquire, StoreKind::Release, None),
            Variant::FenceAcqRelCta | Variant::FenceAcqRelGpu | Variant::FenceAcqRelSys => (
                LoadKind::Relaxed,
                StoreKind::Relaxed,
                Some(FenceKind::AcqRel),
            ),
            Variant::FenceScCta | Variant::FenceScGpu | Variant::FenceScSys => {
                (LoadKind::Relaxed, StoreKind::Relaxed, Some(FenceKind::Sc))
            }
        }
    }
}

impl Placement {
    /// Every placement, closest first.
    pub const ALL: [Placement; 5] = [
        Placement::SameWarp,
        Placement::SameBlock,
        Placement::SameSm,
        Placement::DifferentSms,
        Placement::DifferentGpus,
    ];

    /// The placements within one GPU.
    pub const ONE_GPU: [Placement; 4] = [
        Placement::SameWarp,
        Placement::SameBlock,
        Placement::SameSm,
        Placement::DifferentSms,
    ];

    /// The short name used on the command line and in tables.
    pub const fn name(self) -> &'static str {
        match self {
            Placement::SameWarp => "warp",
            Placement::SameBlock => "block",
            Placement::SameSm => "sm",
            Placement::DifferentSms => "sms",
            Placement::DifferentGpus => "gpus",
        }
    }

    /// The placement named `name`.
    pub fn from_name(name: &str) -> Option<Placement> {
        Placement::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The number the kernel's `placement` parameter takes.
    pub const fn code(self) -> u32 {
        match self {
            Placement::SameWarp => PLACE_SAME_WARP,
            Placement::SameBlock => PLACE_SAME_BLOCK,
            Placement::SameSm => PLACE_SAME_SM,
            Placement::DifferentSms => PLACE_DIFFERENT_SMS,
            Placement::DifferentGpus => PLACE_DIFFERENT_GPUS,
        }
    }
}

macro_rules! from_str {
    ($($t:ident, $what:literal;)*) => {$(
        impl std::str::FromStr for $t {
            type Err = gridsync::runtime::error::Error;
            fn from_str(s: &str) -> Result<$t, Self::Err> {
                $t::from_name(s).ok_or_else(|| {
                    let names: Vec<_> = $t::ALL.iter().map(|x| x.name()).collect();
                    gridsync::runtime::error::Error::InvalidInput(format!(
                        concat!("no ", $what, " {:?}: one of {}"),
                        s,
                        names.join(", ")
                    ))
                })
            }
        }
    )*};
}

pub(super) use from_str;

from_str! {
    Variant, "variant";
    Placement, "placement";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_and_placement_has_a_code_of_its_own() {
        let mut codes: Vec<u32> = Variant::ALL.iter().map(|v| v.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), Variant::ALL.len());
        let mut places: Vec<u32> = Placement::ALL.iter().map(|p| p.code()).collect();
        places.sort_unstable();
        places.dedup();
        assert_eq!(places.len(), Placement::ALL.len());
    }
}
