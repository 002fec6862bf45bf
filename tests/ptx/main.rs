//! Tests of the PTX the build script embedded: every kernel in every build, the intended
//! scope and ordering qualifiers in the instructions, and `ptxas` accepting every build with no
//! local-memory spills. The grid and multi-GPU barriers' arrivals and spins: `barriers.rs`.

mod barriers;
#[path = "../common/mod.rs"]
mod common;

use common::kernel_body;

#[cfg(not(gridsync_no_ptxas))]
#[path = "../common/ptxas.rs"]
mod assembler;
#[cfg(not(gridsync_no_ptxas))]
use assembler::ptxas;
use gpu::Kernel;
use gpu::atomic::{Order, Scope};
use gridsync::runtime::ptx::{BUILDS, arch_capability, best_for};
use std::collections::BTreeSet;

fn entries(ptx: &str) -> BTreeSet<&str> {
    ptx.lines()
        .filter_map(|l| l.trim().strip_prefix(".visible .entry "))
        .map(|rest| rest.split(['(', ' ']).next().unwrap_or(rest))
        .collect()
}

/// Asserts that `body`, the kernel `k`'s PTX in the `arch` build, holds every one of `insns`.
fn assert_emits(arch: &str, k: &str, body: &str, insns: &[impl AsRef<str>]) {
    for insn in insns {
        let insn = insn.as_ref();
        assert!(body.contains(insn), "{arch}: {k} lacks `{insn}`");
    }
}

#[test]
fn builds_cover_sm70_sm80_sm90() {
    let arches: Vec<&str> = BUILDS.iter().map(|(a, _)| *a).collect();
    assert_eq!(arches, ["sm_70", "sm_80", "sm_90"]);
    for (arch, ptx) in BUILDS {
        assert!(
            ptx.contains(&format!(".target {arch}")),
            "{arch}: wrong .target"
        );
        assert!(ptx.contains(".address_size 64"));
    }
}

#[test]
fn every_kernel_is_in_every_build_from_its_architecture_and_nothing_else() {
    let all: BTreeSet<&str> = Kernel::ALL.iter().map(|k| k.name()).collect();
    assert_eq!(all.len(), Kernel::ALL.len(), "duplicate kernel names");
    for (arch, ptx) in BUILDS {
        let (major, minor) = arch_capability(arch).unwrap();
        let listed = built_for(major * 10 + minor);
        assert_eq!(
            entries(ptx),
            listed,
            "{arch}: the PTX entry points and gpu::Kernel differ"
        );
    }
    // Hopper's kernels are in the sm_90 build only.
    assert!(built_for(90).contains("cluster_check"));
    assert!(!built_for(80).contains("cluster_check"));
}

/// The kernels a build for `arch` (major * 10 + minor) holds.
fn built_for(arch: u32) -> BTreeSet<&'static str> {
    Kernel::ALL
        .iter()
        .filter(|k| k.min_arch() <= arch)
        .map(|k| k.name())
        .collect()
}

#[test]
fn best_build_is_the_newest_not_above_the_device() {
    assert_eq!(best_for((6, 1)), None);
    assert_eq!(best_for((7, 0)).map(|b| b.0), Some("sm_70"));
    assert_eq!(best_for((7, 5)).map(|b| b.0), Some("sm_70"));
    assert_eq!(best_for((8, 6)).map(|b| b.0), Some("sm_80"));
    assert_eq!(best_for((9, 0)).map(|b| b.0), Some("sm_90"));
    assert_eq!(best_for((12, 0)).map(|b| b.0), Some("sm_90"));
    assert_eq!(arch_capability("sm_86"), Some((8, 6)));
    assert_eq!(arch_capability("compute_90"), None);
}

#[test]
fn arch_specific_and_family_builds_run_where_they_may() {
    use gridsync::runtime::ptx::{best_in, runs_on};
    assert_eq!(arch_capability("sm_90a"), Some((9, 0)));
    assert_eq!(arch_capability("sm_100f"), Some((10, 0)));
    assert_eq!(arch_capability("sm_121"), Some((12, 1)));
    assert!(runs_on("sm_90a", (9, 0)) && !runs_on("sm_90a", (10, 0)));
    assert!(runs_on("sm_100f", (10, 3)) && !runs_on("sm_100f", (12, 0)));
    assert!(runs_on("sm_90", (12, 0)) && !runs_on("sm_90", (8, 9)));
    let builds: &'static [(&str, &str)] = &[
        ("sm_70", "a"),
        ("sm_90", "b"),
        ("sm_90a", "c"),
        ("sm_100f", "d"),
    ];
    let pick = |cc| best_in(builds, cc).map(|b| b.0);
    assert_eq!(pick((8, 9)), Some("sm_70"));
    assert_eq!(pick((9, 0)), Some("sm_90a"));
    assert_eq!(pick((10, 3)), Some("sm_100f"));
    assert_eq!(pick((12, 0)), Some("sm_90"));
}

/// Every (ordering, scope) pair a read-modify-write can take, as PTX spells it.
fn rmw_qualifiers() -> Vec<String> {
    Order::ALL
        .iter()
        .flat_map(|o| {
            Scope::ALL
                .iter()
                .map(move |s| format!("{}.{}", o.ptx(), s.ptx()))
        })
        .collect()
}

#[test]
fn atomics_emit_every_scope_and_ordering() {
    let ops: &[(&str, &[&str])] = &[
        ("add", &["u32", "s32", "u64", "f32", "f64"]),
        ("exch", &["b32", "b64"]),
        ("cas", &["b32", "b64"]),
        ("min", &["u32", "s32", "u64", "s64"]),
        ("max", &["u32", "s32", "u64", "s64"]),
        ("and", &["b32", "b64"]),
        ("or", &["b32", "b64"]),
        ("xor", &["b32", "b64"]),
        ("inc", &["u32"]),
        ("dec", &["u32"]),
    ];
    for (arch, ptx) in BUILDS {
        for q in rmw_qualifiers() {
            for (op, types) in ops {
                for ty in *types {
                    let insn = format!("atom.{q}.{op}.{ty} ");
                    assert!(ptx.contains(&insn), "{arch}: no `{insn}` in the PTX");
                }
            }
        }
        for s in Scope::ALL {
            let s = s.ptx();
            for w in ["b32", "b64"] {
                for insn in [
                    format!("ld.relaxed.{s}.{w} "),
                    format!("ld.acquire.{s}.{w} "),
                    format!("st.relaxed.{s}.{w} "),
                    format!("st.release.{s}.{w} "),
                ] {
                    assert!(ptx.contains(&insn), "{arch}: no `{insn}`");
                }
            }
            for ty in ["u32", "s32", "u64", "f32", "f64"] {
                for sem in ["relaxed", "release"] {
                    let insn = format!("red.{sem}.{s}.add.{ty} ");
                    assert!(ptx.contains(&insn), "{arch}: no `{insn}`");
                }
            }
        }
    }
}

#[test]
fn cuda_named_atomics_are_relaxed_at_their_scope() {
    // `add_one_atomic` uses `atomic_add_device`: CUDA's atomicAdd is relaxed, device scope.
    for (arch, ptx) in BUILDS {
        let body = kernel_body(ptx, "add_one_atomic");
        assert!(body.contains("atom.relaxed.gpu.add.u32"), "{arch}: {body}");
        assert!(
            !body.contains(".sys"),
            "{arch}: a system-scoped instruction in add_one_atomic"
        );
    }
}

/// The atomic instructions (`atom.` and `red.`) of a kernel body.
fn atomic_insns(body: &str) -> Vec<&str> {
    body.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("atom.") || l.starts_with("red."))
        .collect()
}

#[test]
fn atomic_bench_kernels_emit_their_scope_and_nothing_else() {
    // (kernel stem, instruction kind, operation): each kernel's scope is in its name.
    let ops = [
        ("add_u32", "atom", "add.u32"),
        ("red_add_u32", "red", "add.u32"),
        ("add_f32", "atom", "add.f32"),
        ("cas_u32", "atom", "cas.b32"),
    ];
    let kernels = [
        ("global_block", "cta"),
        ("global_device", "gpu"),
        ("global_system", "sys"),
        ("shared_block", "cta"),
    ];
    for (arch, ptx) in BUILDS {
        for (op, kind, insn) in ops {
            for (memory_scope, scope) in kernels {
                let name = format!("atomic_bench_{op}_{memory_scope}");
                let want = format!("{kind}.relaxed.{scope}.{insn} ");
                let insns = atomic_insns(kernel_body(ptx, &name));
                assert!(!insns.is_empty(), "{arch}: {name} has no atomics");
                for line in insns {
                    assert!(
                        line.starts_with(&want),
                        "{arch}: {name} should hold only `{want}`, has `{line}`"
                    );
                }
            }
        }
    }
}

#[test]
fn f64_add_from_cas_is_a_cas_b64_loop_and_the_native_one_is_not() {
    for (arch, ptx) in BUILDS {
        let body = kernel_body(ptx, "atomic_add_f64_cas");
        let lines: Vec<&str> = body.lines().map(str::trim).collect();
        for line in atomic_insns(body) {
            assert!(
                line.starts_with("atom.relaxed.gpu.cas.b64 "),
                "{arch}: atomic_add_f64_cas has `{line}`"
            );
        }
        assert!(
            body.contains("ld.relaxed.gpu.b64 "),
            "{arch}: no atomic first read"
        );
        // A loop: a branch after a CAS back to a label before it.
        let looped = lines.iter().enumerate().any(|(i, l)| {
            l.starts_with("atom.relaxed.gpu.cas.b64")
                && lines[i..].iter().any(|b| {
                    b.contains("bra")
                        && b.split_whitespace().last().is_some_and(|target| {
                            let label = format!("{}:", target.trim_end_matches(';'));
                            lines[..i].contains(&label.as_str())
                        })
                })
        });
        assert!(looped, "{arch}: atomic_add_f64_cas has no CAS loop");

        let native = kernel_body(ptx, "atomic_add_f64_native");
        let insns = atomic_insns(native);
        assert!(
            !insns.is_empty(),
            "{arch}: atomic_add_f64_native has no atomics"
        );
        for line in insns {
            assert!(
                line.starts_with("atom.relaxed.gpu.add.f64 "),
                "{arch}: atomic_add_f64_native has `{line}`"
            );
        }
    }
}

#[test]
fn fences_and_warp_primitives_emit_their_instructions() {
    for (arch, ptx) in BUILDS {
        let fences = kernel_body(ptx, "fence_check");
        assert_emits(
            arch,
            "fence_check",
            fences,
            &[
                "membar.cta;",
                "membar.gl;",
                "membar.sys;",
                "fence.acq_rel.cta;",
                "fence.acq_rel.gpu;",
                "fence.acq_rel.sys;",
                "fence.sc.cta;",
                "fence.sc.gpu;",
                "fence.sc.sys;",
                "st.release.gpu.b32",
            ],
        );
        let warp = kernel_body(ptx, "warp_check");
        assert_emits(
            arch,
            "warp_check",
            warp,
            &[
                "activemask.b32",
                "shfl.sync.idx.b32",
                "shfl.sync.up.b32",
                "shfl.sync.down.b32",
                "shfl.sync.bfly.b32",
                "vote.sync.ballot.b32",
                "bar.warp.sync",
                "bar.sync",
                "%dynamic_smem_size",
                "%laneid",
            ],
        );
        let timers = kernel_body(ptx, "timer_check");
        assert_emits(
            arch,
            "timer_check",
            timers,
            &["%globaltimer", "%clock64", "nanosleep.u32"],
        );
    }
}

/// The cell list's fills read the offsets and the kept neighbors, and write the rows of at most
/// `KEEP` entries, through pointers from struct arguments said to be global (`gpu::global`):
/// `ld.global` and `st.global`, not the generic `ld` / `st` such pointers get otherwise. (The
/// long rows' second search and sort, off the hot path, keep the generic accesses.)
#[test]
fn the_fills_reach_their_rows_as_global_memory() {
    for (arch, ptx) in BUILDS {
        for k in [
            "cell_fill_f32",
            "cell_fill_atoms_f32",
            "cell_fill_f64",
            "cell_fill_atoms_f64",
        ] {
            assert_emits(
                arch,
                k,
                kernel_body(ptx, k),
                &["ld.global.u32", "st.global.u32"],
            );
        }
    }
}

#[test]
fn count_above_and_dot_kernels_emit_what_their_docs_say() {
    for (arch, ptx) in BUILDS {
        let atoms = |k: &str| kernel_body(ptx, k).matches("atom.").count();
        // Warp aggregation: a ballot and a popcount feed one device-scope atomic per warp.
        let warp = kernel_body(ptx, "gt_thr_cnt_warp");
        assert_emits(
            arch,
            "gt_thr_cnt_warp",
            warp,
            &[
                "vote.sync.ballot.b32",
                "popc.b32",
                "atom.relaxed.gpu.add.u64",
            ],
        );
        // The fast kernels: 16-byte loads, a shuffle reduction, one barrier, and a single atomic
        // instruction (per block, after the loop).
        for (k, atom) in [
            ("gt_thr_cnt_vec4", "atom.relaxed.gpu.add.u64"),
            ("dot_vec4", "atom.relaxed.gpu.add.f32"),
        ] {
            let body = kernel_body(ptx, k);
            assert_emits(
                arch,
                k,
                body,
                &["ld.global.v4.", "shfl.sync.down.b32", "bar.sync", atom],
            );
            assert_eq!(atoms(k), 1, "{arch}: {k} has atomics in its loop");
        }
        assert_eq!(atoms("gt_thr_cnt_block"), 1, "{arch}: gt_thr_cnt_block");
        assert!(kernel_body(ptx, "dot_atomic").contains("atom.relaxed.gpu.add.f32"));
        // The lock kernels take the device-scope Mutex with acquire ordering and no full fence.
        for k in ["gt_thr_cnt_mutex", "dot_mutex"] {
            let body = kernel_body(ptx, k);
            assert!(body.contains("atom.acquire.gpu.cas.b32"), "{arch}: {k}");
            assert!(
                !body.contains("membar") && !body.contains(".sys"),
                "{arch}: {k}"
            );
        }
    }
}

/// The text of one `.entry` up to the next one.

#[test]
#[cfg_attr(
    gridsync_no_ptxas,
    ignore = "ptxas not found at build time (pip install nvidia-cuda-nvcc-cu12)"
)]
fn ptxas_accepts_every_build_without_spills() {
    // Each build on its own architecture, and the sm_70 build (what newer devices JIT from
    // when no closer build exists) on sm_80 and sm_90 too, at once. A newer build that is the
    // sm_70 build's text but for its `.target` line (sm_80's today) is the same code on the
    // same architecture: its own run covers the sm_70 build there, and ptxas runs four times,
    // not five (each takes 17-23 s of a core).
    #[cfg(not(gridsync_no_ptxas))]
    let logs: Vec<_> = std::thread::scope(|s| {
        let same_but_target = |newer: &str, ptx: &str| {
            BUILDS.iter().any(|&(arch, own)| {
                arch == newer
                    && own.replacen(&format!(".target {newer}"), ".target sm_70", 1) == ptx
            })
        };
        let runs: Vec<_> = BUILDS
            .iter()
            .flat_map(|&(arch, ptx)| {
                let on_newer: &[&str] = if arch == "sm_70" {
                    &["sm_80", "sm_90"]
                } else {
                    &[]
                };
                std::iter::once(arch)
                    .chain(
                        on_newer
                            .iter()
                            .copied()
                            .filter(move |newer| !same_but_target(newer, ptx)),
                    )
                    .map(move |target| (arch, target, ptx))
            })
            .map(|(arch, target, ptx)| (arch, target, s.spawn(move || ptxas(target, ptx))))
            .collect();
        runs.into_iter()
            .map(|(arch, target, run)| {
                let log = run.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                (arch, target, log)
            })
            .collect()
    });
    #[cfg(not(gridsync_no_ptxas))]
    {
        for (arch, target, log) in logs {
            let functions = log.matches("Function properties for").count();
            let (major, minor) = arch_capability(arch).unwrap();
            assert_eq!(
                functions,
                built_for(major * 10 + minor).len(),
                "{arch} on {target}: ptxas saw {functions} kernels\n{log}"
            );
            for line in log.lines().filter(|l| l.contains("spill")) {
                assert!(
                    line.contains("0 bytes spill stores, 0 bytes spill loads"),
                    "{arch} on {target}: local-memory spills: {line}\n{log}"
                );
            }
            for line in log.lines().filter(|l| l.contains("stack frame")) {
                assert!(
                    line.trim_start().starts_with("0 bytes stack frame"),
                    "{arch} on {target}: {line}"
                );
            }
        }
    }
}

#[test]
fn locks_emit_their_orderings_at_device_scope() {
    for (arch, ptx) in BUILDS {
        // The production mutex: acquire CAS, release store, both at .gpu; no full fence.
        for k in [
            "lock_mutex",
            "lock_mutex_with",
            "lock_warp_leader",
            "mutex_held_forever",
        ] {
            let body = kernel_body(ptx, k);
            assert_emits(
                arch,
                k,
                body,
                &["atom.acquire.gpu.cas.b32", "nanosleep.u32"],
            );
            // `mutex_held_forever` never drops its guard, so it never releases.
            if k != "mutex_held_forever" {
                assert!(
                    body.contains("st.release.gpu.b32"),
                    "{arch}: {k} never releases"
                );
            }
            assert!(!body.contains("membar"), "{arch}: {k} has a full fence");
        }
        // The warp cohort hands the lock lane to lane at block scope.
        let cohort = kernel_body(ptx, "lock_mutex");
        assert_emits(
            arch,
            "lock_mutex",
            cohort,
            &["activemask.b32", "st.release.cta.b32", "ld.acquire.cta.b32"],
        );
        // `with` hands it lane to lane at a warp barrier: no hand-off word.
        let with = kernel_body(ptx, "lock_mutex_with");
        assert_emits(arch, "lock_mutex_with", with, &["bar.warp.sync"]);
        assert!(
            !with.contains("st.release.cta") && !with.contains("ld.acquire.cta"),
            "{arch}: lock_mutex_with passes the lock through memory"
        );
        let ticket = kernel_body(ptx, "lock_ticket");
        assert_emits(
            arch,
            "lock_ticket",
            ticket,
            &[
                "atom.relaxed.gpu.add.u32",
                "ld.acquire.gpu.b32",
                "st.release.gpu.b32",
            ],
        );
        // The sources' locks: relaxed CAS/exch; fences only where the source has them.
        let unfenced = kernel_body(ptx, "lock_unfenced");
        assert!(unfenced.contains("atom.relaxed.gpu.cas.b32"), "{arch}");
        assert!(unfenced.contains("atom.relaxed.gpu.exch.b32"), "{arch}");
        assert!(
            !unfenced.contains("membar"),
            "{arch}: lock_unfenced is fenced"
        );
        for k in ["lock_fenced", "lock_loop", "add_one_mutex"] {
            assert!(
                kernel_body(ptx, k).contains("membar.gl;"),
                "{arch}: {k} unfenced"
            );
        }
        // Every lock is device-scoped: nothing reaches for .sys.
        for k in [
            "lock_unfenced",
            "lock_fenced",
            "lock_loop",
            "lock_warp_leader",
            "lock_mutex",
            "lock_ticket",
        ] {
            assert!(
                !kernel_body(ptx, k).contains(".sys"),
                "{arch}: {k} uses .sys"
            );
        }
    }
}

#[test]
fn ordering_cost_kernels_hold_their_scope_only() {
    for (arch, ptx) in BUILDS {
        for (kernel, scope) in [
            ("ordering_cost_block", "cta"),
            ("ordering_cost_device", "gpu"),
            ("ordering_cost_system", "sys"),
        ] {
            let body = kernel_body(ptx, kernel);
            assert_emits(
                arch,
                kernel,
                body,
                &[
                    format!("st.relaxed.{scope}."),
                    format!("st.release.{scope}."),
                    format!("atom.acq_rel.{scope}.add.u32"),
                    format!("fence.sc.{scope};"),
                ],
            );
            for other in ["cta", "gpu", "sys"].iter().filter(|s| **s != scope) {
                assert!(
                    !body.contains(&format!(".{other}.")) && !body.contains(&format!(".{other};")),
                    "{arch}: {kernel} has a .{other} instruction"
                );
            }
        }
    }
}

#[test]
fn reductions_fence_before_the_ticket_and_use_no_float_atomics_in_one_pass() {
    let single_pass: Vec<&str> = Kernel::ALL
        .iter()
        .map(|k| k.name())
        .filter(|n| n.starts_with("reduce_last_block_") || n.starts_with("reduce_vec_"))
        .collect();
    assert_eq!(single_pass.len(), 13);
    for (arch, ptx) in BUILDS {
        // The sources' and the warp kernel: one float atomicAdd per block, nothing else.
        for (k, atom) in [
            ("reduce_atomic", "atom.relaxed.gpu.add.f32 "),
            ("reduce_atomic_f64", "atom.relaxed.gpu.add.f64 "),
            ("reduce_warp", "atom.relaxed.gpu.add.f32 "),
        ] {
            let insns = atomic_insns(kernel_body(ptx, k));
            assert!(
                insns.len() == 1 && insns[0].starts_with(atom),
                "{arch}: {k} has {insns:?}"
            );
        }
        assert!(atomic_insns(kernel_body(ptx, "partial_reduce")).is_empty());
        // Single pass: the partial is published (`membar.gl`) before the ticket (`atomicInc`),
        // the last block acquires after it, then resets the counter; the ticket is the only
        // atomic — no float atomics, hence the same bits on every run.
        for k in &single_pass {
            let body = kernel_body(ptx, k);
            let insns = atomic_insns(body);
            assert!(
                insns.len() == 1 && insns[0].starts_with("atom.relaxed.gpu.inc.u32 "),
                "{arch}: {k} has {insns:?}"
            );
            let at = |insn: &str| {
                body.find(insn)
                    .unwrap_or_else(|| panic!("{arch}: {k} lacks `{insn}`"))
            };
            let (fence, ticket) = (at("membar.gl;"), at("atom.relaxed.gpu.inc.u32"));
            let (acquire, reset) = (at("fence.acq_rel.gpu;"), at("st.relaxed.gpu.b32"));
            assert!(
                fence < ticket && ticket < acquire && acquire < reset,
                "{arch}: {k}: fence, ticket, acquire, reset out of order"
            );
            assert!(!body.contains(".sys"), "{arch}: {k} uses .sys");
            if k.starts_with("reduce_vec_") {
                assert!(
                    body.contains("ld.global.v4.") || body.contains("ld.global.v2."),
                    "{arch}: {k} has no 16-byte loads"
                );
            }
        }
    }
}

#[test]
fn histogram_kernels_emit_what_their_docs_say() {
    for (arch, ptx) in BUILDS {
        let insns = |k: &str| atomic_insns(kernel_body(ptx, k));
        // 4.3: one device-scope add per byte, nothing in shared memory.
        let global = insns("histogram_global");
        assert!(
            !global.is_empty(),
            "{arch}: histogram_global has no atomics"
        );
        for i in &global {
            assert!(i.starts_with("atom.relaxed.gpu.add.u64 "), "{arch}: {i}");
        }
        // 4.4: block-scope u64 adds on shared addresses (generic), device adds in the flush;
        // the instrument has no device-scope atomic at all.
        for k in ["histogram_shared", "histogram_shared_rows"] {
            let body = kernel_body(ptx, k);
            assert!(
                body.contains("cvta.shared.u64") && body.contains("bar.sync"),
                "{arch}: {k}"
            );
            assert!(
                insns(k)
                    .iter()
                    .any(|i| i.starts_with("atom.relaxed.cta.add.u64 ")),
                "{arch}: {k}"
            );
            let device = insns(k).iter().filter(|i| i.contains(".gpu.")).count();
            assert_eq!(device, usize::from(k == "histogram_shared"), "{arch}: {k}");
        }
        // The faster kernels: `red.shared` in the byte loop, one or two device adds (the flush)
        // after it, 16-byte loads in the vector ones, no local memory and no system scope.
        for (k, v4, device) in [
            ("histogram_warp", false, 1),
            ("histogram_vec16", true, 1),
            ("histogram_lane", true, 2),
        ] {
            let body = kernel_body(ptx, k);
            let all = insns(k);
            assert!(
                all.iter()
                    .any(|i| i.starts_with("red.relaxed.cta.shared.add.u32 ")),
                "{arch}: {k}"
            );
            for i in &all {
                assert!(
                    i.starts_with("red.relaxed.cta.shared.add.u32 ")
                        || i.starts_with("atom.relaxed.gpu.add.u64 "),
                    "{arch}: {k} has `{i}`"
                );
            }
            let flush = all.iter().filter(|i| i.starts_with("atom.")).count();
            assert_eq!(
                flush, device,
                "{arch}: {k}: device atomics outside the flush"
            );
            assert_eq!(
                body.contains("ld.global.v4."),
                v4,
                "{arch}: {k}: 16-byte loads"
            );
            assert!(
                body.contains("cvta.to.shared.u64") && body.contains("bar.sync"),
                "{arch}: {k}"
            );
            assert!(
                !body.contains(".local") && !body.contains(".sys"),
                "{arch}: {k}"
            );
        }
    }
}
