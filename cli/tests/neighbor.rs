//! `gridsync neighbor`: the book's files and the bonds plot written, bad files refused; the
//! neighbor benchmark. (The kernels and the library call: `tests/neighbor.rs`.)

mod common;

use gridsync::Error;
use gridsync::neighbor::demo::DEFAULT_MAX_NEIGHBORS;
use gridsync::neighbor::{NeighborList, graphene};

#[test]
fn the_cli_writes_the_books_files_and_the_bonds_plot() {
    let dir = std::env::temp_dir().join(format!("gridsync-neighbor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (xy, out, svg) = (
        dir.join("xy.txt"),
        dir.join("neighbor.txt"),
        dir.join("bonds.svg"),
    );
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let report = common::cli_json(&[
        "neighbor",
        "--simulate",
        "--atoms",
        "400",
        "--write-xy",
        &s(&xy),
        "--output",
        &s(&out),
        "--plot",
        &s(&svg),
        "--json",
    ]);
    assert_eq!(report["atoms"], 400);
    // The files: atoms that read back, the book's neighbor.txt of the same lists, a plot.
    let atoms = gridsync::neighbor::xy::read_xy(&xy).unwrap();
    let generated = graphene::graphene(400, 1).unwrap();
    assert_eq!(atoms.len(), 400);
    for i in 0..400 {
        approx::assert_relative_eq!(atoms.x()[i], generated.x()[i]);
        approx::assert_relative_eq!(atoms.y()[i], generated.y()[i]);
    }
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 400);
    assert_eq!(
        lines[0].split_whitespace().count(),
        1 + DEFAULT_MAX_NEIGHBORS
    );
    let list = NeighborList::read_book_format(&text).unwrap();
    assert_eq!(list.pairs() as u64, report["entries"].as_u64().unwrap());
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(
        plot.matches("<circle").count() - legend_swatches(&plot),
        400
    );
    assert!(plot.contains("class=\"bonds\""));
    let bonds = plot
        .split("class=\"bonds\" d=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap();
    assert_eq!(bonds.matches('M').count(), list.pairs() / 2);
    // A malformed file: exit 1 naming the line.
    std::fs::write(&xy, "3\n0 0\n1 x\n2 2\n").unwrap();
    let o = common::cli(&["neighbor", "--simulate", "--input", &s(&xy)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("line 3"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Circles of the legend (one per neighbor count shown), not atoms.
fn legend_swatches(svg: &str) -> usize {
    svg.matches("r=\"5\" fill=").count()
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_bench_sizes_past_memory_are_refused_before_anything_is_allocated() {
    use gridsync_cli::bench::neighbor::{NeighborBenchOptions, run as bench};
    let t = common::gpu();
    for (cells, pairs, option) in [
        (vec![10_000, 50_000_000_000], vec![], "--len 50000000000"),
        (vec![], vec![50_000_000_000], "--all-pairs-len 50000000000"),
    ] {
        let opts = NeighborBenchOptions {
            cell_atoms: cells,
            all_pairs_atoms: pairs,
            trials: 1,
            ..NeighborBenchOptions::default()
        };
        let mut steps = 0;
        let e = bench(&t, &opts, |_, _| steps += 1).unwrap_err();
        assert!(matches!(e, Error::TooLarge { .. }), "{e}");
        assert!(e.to_string().contains(option), "{e}");
        assert_eq!(steps, 0, "refused before the first step");
    }
}
