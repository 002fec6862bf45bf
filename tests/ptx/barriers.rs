//! The grid and multi-GPU barriers in every build: their arrivals, the loops that spin on them,
//! and the scope the peers' kernels reach.

use super::*;

/// The loops of a kernel body: for every backward branch, the lines from its target label to
/// the branch.
fn loops(body: &str) -> Vec<String> {
    let lines: Vec<&str> = body.lines().collect();
    let label_at = |name: &str| {
        lines
            .iter()
            .position(|l| l.trim().strip_suffix(':') == Some(name))
    };
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let Some(target) = line
            .split_once("bra")
            .and_then(|(_, rest)| rest.trim_start_matches(".uni").trim().strip_suffix(';'))
        else {
            continue;
        };
        if let Some(start) = label_at(target.trim())
            && start <= n
        {
            out.push(lines[start..=n].join("\n"));
        }
    }
    out
}

/// A loop that only polls memory: no float arithmetic (the X→P→X sums) and no atomic.
fn spins<'a>(loops: &'a [String], load: &str) -> Vec<&'a String> {
    loops
        .iter()
        .filter(|l| l.contains(load) && !l.contains(".f32") && !l.contains("atom."))
        .collect()
}

#[test]
fn grid_barriers_emit_their_arrivals_and_spins() {
    for (arch, ptx) in BUILDS {
        // GridBarrier: a release `red` to arrive (no answer awaited), acquire polls, bar.red to
        // hand the verdict to the block; no full fence, nothing at system scope.
        for k in [
            "xpx_grid_barrier",
            "grid_barrier_bare",
            "grid_barrier_phases",
        ] {
            let body = kernel_body(ptx, k);
            assert_emits(
                arch,
                k,
                body,
                &[
                    "red.release.gpu.add.u32",
                    "ld.acquire.gpu.b32",
                    "bar.sync",
                    "bar.red.or.pred",
                    // The leader's test names lane 0 for ptxas (`block_leader`).
                    "setp.eq.u32 %lane0, %lane, 0;",
                ],
            );
            assert!(!body.contains("membar"), "{arch}: {k} has a full fence");
            assert!(!body.contains(".sys"), "{arch}: {k} uses .sys");
            // `bar.red` is `.aligned`: every thread must execute the same instance. The
            // compiler must not have duplicated it into branches: one per `sync` call site.
            let sites = if k == "grid_barrier_bare" { 1 } else { 2 };
            assert_eq!(
                body.matches("bar.red.or.pred").count(),
                sites,
                "{arch}: {k}'s bar.red instances"
            );
            assert!(
                !spins(&loops(body), "ld.acquire.gpu.b32").is_empty(),
                "{arch}: {k} has no acquire spin"
            );
        }
        // The article's barrier: atomicInc, threadfence, a spin on a volatile load.
        let article = kernel_body(ptx, "xpx_article");
        assert_emits(
            arch,
            "xpx_article",
            article,
            &[
                "atom.relaxed.gpu.inc.u32",
                "membar.gl",
                "ld.volatile.global.b32",
            ],
        );
        assert!(
            !spins(&loops(article), "ld.volatile.global.b32").is_empty(),
            "{arch}: xpx_article has no volatile spin"
        );
        // The same barrier spinning on a plain load: the load left the loop, and no loop polls
        // the counter — the wait the article saw its compiler delete.
        let plain = kernel_body(ptx, "xpx_plain_spin");
        assert!(plain.contains("atom.relaxed.gpu.inc.u32"), "{arch}");
        assert!(!plain.contains("ld.volatile"), "{arch}: xpx_plain_spin");
        assert!(
            spins(&loops(plain), "ld.global.b32").is_empty(),
            "{arch}: xpx_plain_spin still spins: {:?}",
            spins(&loops(plain), "ld.global.b32")
        );
    }
}

#[test]
fn peer_kernels_reach_system_scope_where_their_argument_asks() {
    // Each cross-GPU kernel takes its scope as an argument: the system-scope instructions the
    // objects need across GPUs are there, beside their `.gpu` twins (the device-scope runs).
    let want: [(&str, &[&str]); 3] = [
        (
            "peer_count",
            &["atom.relaxed.sys.add.u32", "atom.relaxed.gpu.add.u32"],
        ),
        (
            "peer_lock",
            &[
                "atom.acquire.sys.cas.b32",
                "st.release.sys.b32",
                "atom.acquire.gpu.cas.b32",
                "st.release.gpu.b32",
                "nanosleep.u32",
            ],
        ),
        (
            "peer_barrier",
            &[
                "red.release.sys.add.u32",
                "ld.acquire.sys.b32",
                "red.release.gpu.add.u32",
                "ld.acquire.gpu.b32",
                "bar.red.or.pred",
            ],
        ),
    ];
    for (arch, ptx) in BUILDS {
        for (k, insns) in want {
            let body = kernel_body(ptx, k);
            assert_emits(arch, k, body, insns);
            // The scoped release and acquire do the ordering; no full fence stands in.
            assert!(!body.contains("membar"), "{arch}: {k} has a full fence");
        }
        // The barrier waits in a loop of acquire polls at system scope.
        let barrier = kernel_body(ptx, "peer_barrier");
        assert!(
            !spins(&loops(barrier), "ld.acquire.sys.b32").is_empty(),
            "{arch}: peer_barrier has no system-scope acquire spin"
        );
    }
}
