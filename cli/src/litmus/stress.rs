//! The litmus kernel's stressing parameters: where the threads of an instance run, where its
//! locations lie, and how the memory around the racing accesses is stressed — the knobs of the
//! literature's testing environments (Kirkham et al., "Foundations of Empirical Memory
//! Consistency Testing", OOPSLA 2020; Levine et al., "GPUHarbor", ISSTA 2023): thread placement
//! and its shuffling, testing and stressing workgroups, memory stride, stress pattern and
//! iterations, pre-stress, a barrier before the test. Which settings provoke the most weak
//! outcomes differs from GPU to GPU (Kirkham et al. tune them per device); `gridsync litmus
//! --tune` searches them on the GPU at hand ([`super::tune`]).

use gpu::lessons::litmus::{
    SM_ORDER_ADJACENT, SM_ORDER_SHUFFLED, SM_ORDER_SPREAD, STRESS_LOAD_LOAD, STRESS_LOAD_STORE,
    STRESS_STORE_LOAD, STRESS_STORE_STORE,
};
use gridsync::runtime::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The most stress or pre-stress accesses a thread may make per round: a round waits for the
/// slowest thread, and the literature's largest settings are 1024 and 2048.
pub const MAX_STRESS_ITERS: u32 = 1 << 16;
/// The most scratch lines the stress threads may hammer (128 bytes each: 8 MiB).
pub const MAX_STRESS_LINES: u32 = 1 << 16;
/// The most words between two location slots (4 KiB).
pub const MAX_STRIDE_WORDS: u32 = 1024;

/// How a stress access pairs its two accesses: the first to a random scratch line, the second
/// to the neighbouring line (the literature's four patterns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StressPattern {
    /// Two stores.
    StoreStore,
    /// A store, then a load.
    StoreLoad,
    /// A load, then a store.
    LoadStore,
    /// Two loads.
    LoadLoad,
}

/// Which SMs form an instance's group at [`Placement::DifferentSms`](super::Placement).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SmOrder {
    /// Consecutive `%smid`: on NVIDIA GPUs mostly the two SMs of one TPC.
    Adjacent,
    /// `%smid`s `sms / threads` apart: far across the chip, the same SMs every round.
    Spread,
    /// A new random permutation of the SMs every launch: every pair of SMs in turn (the
    /// literature's shuffled workgroups).
    Shuffled,
}

impl StressPattern {
    /// Every pattern.
    pub const ALL: [StressPattern; 4] = [
        StressPattern::StoreStore,
        StressPattern::StoreLoad,
        StressPattern::LoadStore,
        StressPattern::LoadLoad,
    ];

    /// The name on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            StressPattern::StoreStore => "store-store",
            StressPattern::StoreLoad => "store-load",
            StressPattern::LoadStore => "load-store",
            StressPattern::LoadLoad => "load-load",
        }
    }

    /// The pattern named `name`.
    pub fn from_name(name: &str) -> Option<StressPattern> {
        StressPattern::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The kernel's `stress_pattern`.
    pub const fn code(self) -> u32 {
        match self {
            StressPattern::StoreStore => STRESS_STORE_STORE,
            StressPattern::StoreLoad => STRESS_STORE_LOAD,
            StressPattern::LoadStore => STRESS_LOAD_STORE,
            StressPattern::LoadLoad => STRESS_LOAD_LOAD,
        }
    }
}

impl SmOrder {
    /// Every order.
    pub const ALL: [SmOrder; 3] = [SmOrder::Adjacent, SmOrder::Spread, SmOrder::Shuffled];

    /// The name on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            SmOrder::Adjacent => "adjacent",
            SmOrder::Spread => "spread",
            SmOrder::Shuffled => "shuffled",
        }
    }

    /// The order named `name`.
    pub fn from_name(name: &str) -> Option<SmOrder> {
        SmOrder::ALL.into_iter().find(|o| o.name() == name)
    }

    /// The kernel's `sm_order`.
    pub const fn code(self) -> u32 {
        match self {
            SmOrder::Adjacent => SM_ORDER_ADJACENT,
            SmOrder::Spread => SM_ORDER_SPREAD,
            SmOrder::Shuffled => SM_ORDER_SHUFFLED,
        }
    }
}

super::variant::from_str! {
    StressPattern, "stress pattern";
    SmOrder, "order of the SMs";
}

/// How the litmus kernel places, lays out and stresses its instances (see the module docs).
/// Missing fields of a report saved before they existed read as [`Stress::LEGACY`]'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stress {
    /// Accesses each stress thread makes per round (0: no stress).
    pub iters: u32,
    /// Lines of 128 bytes the stress threads hammer (a power of two, at least 2).
    pub lines: u32,
    /// How each stress access pairs its two accesses.
    #[serde(default = "legacy::pattern")]
    pub pattern: StressPattern,
    /// Stress accesses each tester makes itself just before its spin-up, every round.
    #[serde(default)]
    pub pre_iters: u32,
    /// Words between two location slots: 32 puts each location on its own 128-byte line.
    pub stride_words: u32,
    /// Blocks of each SM that only stress; `None`: a quarter of them, leaving at least as many
    /// testing as a test has threads.
    #[serde(default)]
    pub stress_blocks: Option<u32>,
    /// Which SMs form an instance's group across SMs.
    #[serde(default = "legacy::sm_order")]
    pub sm_order: SmOrder,
    /// Whether an instance's threads meet at a spin-up barrier before their accesses (else they
    /// start from the round's grid barrier).
    #[serde(default = "legacy::spin_up")]
    pub spin_up: bool,
}

/// [`Stress::LEGACY`]'s fields, for reports saved before the fields existed.
mod legacy {
    use super::{SmOrder, Stress, StressPattern};
    pub fn pattern() -> StressPattern {
        Stress::LEGACY.pattern
    }
    pub fn sm_order() -> SmOrder {
        Stress::LEGACY.sm_order
    }
    pub fn spin_up() -> bool {
        Stress::LEGACY.spin_up
    }
}

impl Default for Stress {
    fn default() -> Stress {
        Stress::DEFAULT
    }
}

impl Stress {
    /// The defaults, found by `gridsync litmus --tune` on an H100 (MP relaxed across SMs, 45 s,
    /// 17 trials; `docs/litmus.md`), and why each helps:
    ///
    /// - the testing blocks on SMs **spread** across the chip (`sms / threads` apart): SMs of
    ///   consecutive ids are mostly the two SMs of one TPC, which share a path to memory and
    ///   rarely reorder against each other (the legacy placement: 4.7·10⁻⁴ per instance);
    /// - one stressing block per SM, **load then store** over 2 lines, 64 accesses per thread
    ///   and round: a little traffic on few lines beside the testers, as the literature's
    ///   stress; more stressing blocks took SM time from the testers without more weak
    ///   outcomes per instance;
    /// - each location two 128-byte lines from the next (stride 64 words);
    /// - a spin-up barrier per instance (the literature's barrier, `barrierPct` 100), no
    ///   pre-stress.
    ///
    /// The tuned settings gave MP relaxed 1.26·10⁻² per instance against 5.2·10⁻³ for the first
    /// candidate (shuffled SMs, 64 lines, store then load, stride 32, a quarter of the blocks
    /// stressing) in the same run.
    pub const DEFAULT: Stress = Stress {
        iters: 64,
        lines: 2,
        pattern: StressPattern::LoadStore,
        pre_iters: 0,
        stride_words: 64,
        stress_blocks: Some(1),
        sm_order: SmOrder::Spread,
        spin_up: true,
    };

    /// The parameters before the SMs' order, the stress pattern, the pre-stress, the stress
    /// blocks and the spin-up could be chosen: SMs of consecutive ids, 64 stress accesses over
    /// 64 lines, store then load, stride 32 words, a quarter of the blocks stressing (the kernel
    /// of the measurements in `docs/litmus.md` up to 2026-11-26).
    pub const LEGACY: Stress = Stress {
        iters: 64,
        lines: 64,
        pattern: StressPattern::StoreLoad,
        pre_iters: 0,
        stride_words: 32,
        stress_blocks: None,
        sm_order: SmOrder::Adjacent,
        spin_up: true,
    };

    /// The presets by name: `default`, `legacy`.
    pub const PRESETS: [(&'static str, Stress); 2] =
        [("default", Stress::DEFAULT), ("legacy", Stress::LEGACY)];

    /// The preset named `name`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the presets.
    pub fn preset(name: &str) -> Result<Stress> {
        Stress::PRESETS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, s)| s)
            .ok_or_else(|| {
                let names: Vec<&str> = Stress::PRESETS.iter().map(|(n, _)| *n).collect();
                Error::InvalidInput(format!(
                    "no stress preset {name:?}: one of {}",
                    names.join(", ")
                ))
            })
    }

    /// Refuses values the kernel cannot use, each with the option that sets it and its range.
    /// (Whether `stress_blocks` leaves a block to test depends on the device: the runner checks
    /// it.)
    ///
    /// # Errors
    /// [`Error::InvalidInput`].
    pub fn check(&self) -> Result<()> {
        let bad = |what: String| Err(Error::InvalidInput(what));
        if self.lines < 2 || !self.lines.is_power_of_two() || self.lines > MAX_STRESS_LINES {
            return bad(format!(
                "--stress-lines must be a power of two from 2 to {MAX_STRESS_LINES}, not {}",
                self.lines
            ));
        }
        if !(1..=MAX_STRIDE_WORDS).contains(&self.stride_words) {
            return bad(format!(
                "--stride must be 1 to {MAX_STRIDE_WORDS} words, not {}",
                self.stride_words
            ));
        }
        for (option, v) in [
            ("--stress-iters", self.iters),
            ("--pre-stress", self.pre_iters),
        ] {
            if v > MAX_STRESS_ITERS {
                return bad(format!(
                    "{option} must be 0 to {MAX_STRESS_ITERS} accesses a round, not {v}"
                ));
            }
        }
        Ok(())
    }

    /// Each parameter's option (without its `--`) and value as the command line spells them:
    /// what [`Stress::flags`] joins and `gridsync litmus --tune` prints a column of each.
    pub fn options(&self) -> [(&'static str, String); 8] {
        [
            ("sm-order", self.sm_order.name().to_string()),
            ("stress-iters", self.iters.to_string()),
            ("stress-lines", self.lines.to_string()),
            ("stress-pattern", self.pattern.name().to_string()),
            ("pre-stress", self.pre_iters.to_string()),
            ("stride", self.stride_words.to_string()),
            (
                "stress-blocks",
                self.stress_blocks
                    .map_or("auto".to_string(), |n| n.to_string()),
            ),
            (
                "spin-up",
                if self.spin_up { "on" } else { "off" }.to_string(),
            ),
        ]
    }

    /// The command-line options that select these parameters.
    pub fn flags(&self) -> String {
        self.options()
            .iter()
            .map(|(option, value)| format!("--{option} {value}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}
