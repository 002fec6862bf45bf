//! The PTX of Hopper's primitives: the sm_90 build is PTX ISA 8.0 and holds each `mbarrier`,
//! asynchronous-copy and cluster instruction in the kernels that use it — with the scope and
//! ordering their docs name — and nowhere else; the older builds hold none of them.

mod common;

use common::kernel_body;
use gridsync::runtime::ptx::BUILDS;

fn build(arch: &str) -> &'static str {
    BUILDS
        .iter()
        .find(|(a, _)| *a == arch)
        .map(|(_, p)| *p)
        .unwrap_or_else(|| panic!("no {arch} build"))
}

/// The producer/consumer ring's instructions: barriers initialized and fenced for the copy
/// engine, a bulk copy completing on the full barrier, bounded parity waits, releases.
const RING: &[&str] = &[
    "mbarrier.init.shared::cta.b64",
    "fence.proxy.async.shared::cta",
    "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64",
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
    "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64",
    "mbarrier.arrive.release.cta.shared::cta.b64",
    "%globaltimer",
];

/// The library's pipelined kernels: [`RING`], with the landed stages read by 16-byte shared
/// loads.
const READ_STAGES_BY_16: &[&str] = &[
    "histogram_pipeline",
    "reduce_pipeline_sum_f32",
    "reduce_pipeline_sum_f32_in_f64",
    "reduce_pipeline_sum_f32_kahan",
];

/// The cluster-aware grid barrier: the cluster barrier, one release add per cluster at device
/// scope, acquire polls, bounded.
const CLUSTER_GRID_BARRIER: &[&str] = &[
    "barrier.cluster.arrive.release",
    "barrier.cluster.wait.acquire",
    "%cluster_ctarank",
    "%nclusterid.x",
    "red.release.gpu.add.u32",
    "ld.acquire.gpu",
    "%globaltimer",
];

/// What each Hopper check kernel must contain.
const PINS: &[(&str, &[&str])] = &[
    (
        "mbarrier_phases",
        &[
            "mbarrier.init.shared::cta.b64",
            "mbarrier.arrive.release.cta.shared::cta.b64",
            "mbarrier.try_wait.acquire.cta.shared::cta.b64",
            "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64",
            "%globaltimer",
        ],
    ),
    (
        "bulk_pipeline_copy",
        &[
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
            "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64",
            "mbarrier.complete_tx.relaxed.cta.shared::cta.b64",
            "fence.proxy.async.shared::cta",
            "cvta.to.global.u64",
        ],
    ),
    (
        "cp_async_transform",
        &[
            "cp.async.cg.shared.global",
            "cp.async.commit_group",
            "cp.async.wait_group 1",
            "cp.async.wait_all",
            "cp.async.mbarrier.arrive.noinc.shared::cta.b64",
        ],
    ),
    (
        "bulk_store",
        &[
            "cp.async.bulk.global.shared::cta.bulk_group",
            "cp.async.bulk.commit_group",
            "cp.async.bulk.wait_group 0",
            "fence.proxy.async.shared::cta",
        ],
    ),
    (
        "cluster_check",
        &[
            "%cluster_ctarank",
            "%cluster_nctarank",
            "%clusterid.x",
            "%nclusterid.x",
            "barrier.cluster.arrive.release",
            "barrier.cluster.wait.acquire",
            "mapa.u64",
            "mapa.shared::cluster.u32",
            "red.relaxed.cluster.shared::cluster.add.u32",
            "ld.shared::cluster.u32",
            "fence.acq_rel.cluster",
        ],
    ),
    (
        "mbarrier_remote",
        &[
            "fence.mbarrier_init.release.cluster",
            "mbarrier.arrive.release.cluster.shared::cluster.b64 _",
            "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64",
        ],
    ),
    (
        "histogram_u16_cluster",
        &[
            "barrier.cluster.arrive.release",
            "barrier.cluster.wait.acquire",
            "mapa.shared::cluster.u32",
            "red.relaxed.cluster.shared::cluster.add.u32",
        ],
    ),
    (
        "cluster_sync_bare",
        &[
            "barrier.cluster.arrive.release",
            "barrier.cluster.wait.acquire",
        ],
    ),
    (
        "cluster_sync_relaxed",
        &[
            "barrier.cluster.arrive.relaxed",
            "barrier.cluster.wait.acquire",
        ],
    ),
    (
        "cluster_split",
        &[
            "barrier.cluster.arrive.release",
            "barrier.cluster.wait.acquire",
        ],
    ),
    (
        "cluster_unsplit",
        &[
            "barrier.cluster.arrive.release",
            "barrier.cluster.wait.acquire",
        ],
    ),
    (
        "relay_split",
        &[
            "mbarrier.arrive.release.cta.shared::cta.b64",
            "mbarrier.try_wait.acquire.cta",
        ],
    ),
    (
        "relay_no_wait",
        &["mbarrier.arrive.release.cta.shared::cta.b64"],
    ),
    (
        "relay_stuck_parity",
        &["mbarrier.try_wait.parity.acquire.cta"],
    ),
    (
        "relay_wait_before_arrive",
        &["mbarrier.try_wait.parity.acquire.cta"],
    ),
    ("relay_sync_threads", &["bar.sync"]),
    ("pipeline_transform", RING),
    ("pipeline_no_full_wait", RING),
    ("pipeline_no_empty_wait", RING),
    ("grid_barrier_cluster_bare", CLUSTER_GRID_BARRIER),
    ("cluster_grid_barrier_phases", CLUSTER_GRID_BARRIER),
    ("cluster_barrier_stress", CLUSTER_GRID_BARRIER),
    ("cluster_grid_barrier_absent_cluster", CLUSTER_GRID_BARRIER),
    ("histogram_pipeline", RING),
    ("reduce_pipeline_sum_f32", RING),
    ("reduce_pipeline_sum_f32_in_f64", RING),
    ("reduce_pipeline_sum_f32_kahan", RING),
    (
        "mbarrier_wrong_parity",
        &[
            "mbarrier.try_wait.parity.acquire.cta",
            "mbarrier.inval.shared::cta.b64",
        ],
    ),
];

/// Instructions that belong to Hopper's kernels only.
const HOPPER_ONLY: &[&str] = &[
    "mbarrier.",
    "cp.async",
    "barrier.cluster",
    "mapa.",
    "fence.proxy.async",
    "fence.mbarrier_init",
    "shared::cluster",
    "%cluster",
];

#[test]
fn the_sm90_build_is_ptx_8_0_and_the_older_ones_7_0() {
    assert!(
        build("sm_90").contains(".version 8.0"),
        "sm_90 needs PTX 8.0 for expect_tx and bulk copies"
    );
    assert!(build("sm_80").contains(".version 7.0"));
    assert!(build("sm_70").contains(".version 7.0"));
}

#[test]
fn hopper_kernels_emit_their_instructions() {
    let ptx = build("sm_90");
    for (kernel, wanted) in PINS {
        let body = kernel_body(ptx, kernel);
        for w in *wanted {
            assert!(body.contains(w), "{kernel}: no `{w}` in its sm_90 PTX");
        }
    }
    for kernel in READ_STAGES_BY_16 {
        assert!(
            kernel_body(ptx, kernel).contains("ld.shared.v4"),
            "{kernel}: its stages are not read by 16-byte shared loads"
        );
    }
}

#[test]
fn hopper_instructions_appear_nowhere_else() {
    for (arch, ptx) in BUILDS {
        let mut rest = *ptx;
        while let Some(start) = rest.find(".entry ") {
            let after = &rest[start + 7..];
            let name = after.split('(').next().unwrap_or_default();
            let body = kernel_body(rest, name);
            let ours = PINS.iter().any(|(k, _)| *k == name);
            if !ours {
                for insn in HOPPER_ONLY {
                    assert!(!body.contains(insn), "{arch}: {name} holds `{insn}`");
                }
            }
            rest = &after[1..];
        }
        if *arch != "sm_90" {
            for insn in HOPPER_ONLY {
                assert!(
                    !ptx.contains(insn),
                    "{arch}: `{insn}` in a pre-Hopper build"
                );
            }
        }
    }
}

#[test]
fn waits_are_bounded_and_arrivals_release() {
    let ptx = build("sm_90");
    for kernel in [
        "mbarrier_phases",
        "bulk_pipeline_copy",
        "cp_async_transform",
        "mbarrier_remote",
        "histogram_pipeline",
        "reduce_pipeline_sum_f32",
        "reduce_pipeline_sum_f32_in_f64",
        "reduce_pipeline_sum_f32_kahan",
        "pipeline_transform",
        "pipeline_no_full_wait",
        "pipeline_no_empty_wait",
    ] {
        let body = kernel_body(ptx, kernel);
        assert!(
            body.contains("%globaltimer"),
            "{kernel}: an mbarrier wait without a deadline"
        );
        assert!(
            !body.contains("mbarrier.arrive.relaxed"),
            "{kernel}: a relaxed arrival"
        );
    }
}

#[test]
fn the_library_pipelines_take_their_wait_bound_from_the_host() {
    // The bound is a parameter (the host stretches it under a sanitizer), not a constant
    // compiled in: a `u64` just before the error word, read by the kernel.
    let ptx = build("sm_90");
    for kernel in READ_STAGES_BY_16 {
        let body = kernel_body(ptx, kernel);
        let header = &body[..body.find(')').unwrap_or(body.len())];
        let params: Vec<&str> = header
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with(".param"))
            .collect();
        let n = params.len();
        assert!(n >= 2, "{kernel}: {params:?}");
        let bound = format!(".param .u64 {kernel}_param_{}", n - 2);
        assert!(
            params[n - 2].trim_end_matches(',') == bound,
            "{kernel}: no u64 wait bound before the error word: {params:?}"
        );
        assert!(
            params[n - 1].contains(".ptr"),
            "{kernel}: the error word is not last"
        );
        assert!(
            body.contains(&format!("[{kernel}_param_{}]", n - 2)),
            "{kernel}: the wait bound is never read"
        );
    }
}
