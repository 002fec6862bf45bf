//! Litmus tests: the catalogue agrees with the weak memory (exhaustively: every outcome it can
//! give is sequentially consistent or the test's weak outcome, and the weak outcome is reachable
//! exactly where the PTX model allows it); seeded runs never show a forbidden outcome and replay;
//! the litmus kernel places, runs and counts every instance on the simulator and the GPU.

#[path = "../common/mod.rs"]
mod common;
mod kernel;
mod primitives;
mod sm_order;
mod stress;
mod suite;
mod tune;
mod weak_memory;

use gpu::lessons::litmus::{
    LITMUS_MAX_THREADS, LitmusLaunch, PLACE_DIFFERENT_SMS, SM_ORDER_ADJACENT, SM_ORDER_SHUFFLED,
    SM_ORDER_SPREAD, STRESS_STORE_LOAD, SmGroups,
};
use gpu::sim::weak::{Mode, program};
use gridsync::Target;
use gridsync_cli::litmus::{
    LitmusOptions, Placement, Runner, SmOrder, Stress, StressPattern, Test, Variant, Verdict,
    model, outcome, run,
};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};
