//! Neighbor lists: every kernel against the CPU reference on the simulator (random points in
//! 2-D and 3-D, odd sizes, a honeycomb, graphene, a periodic box, the cutoff's edge,
//! coincident atoms), overflow without corruption, bad inputs, the library call; the same on a
//! GPU where there is one. The command and the benchmark: `cli/tests/`.

mod common;

use gridsync::nalgebra::{Point2, Point3};
use gridsync::neighbor::demo::{NeighborOptions, corruption};
use gridsync::neighbor::launch::{BookKernel, BookRun, DeviceAtoms, UNWRITTEN, rule};
use gridsync::neighbor::reference::{Cutoff, half_pairs};
use gridsync::neighbor::{Atoms, NeighborList, generate, graphene, neighbor_list, run};
use gridsync::runtime::buffer::Buffer;
use gridsync::{Error, Target};
use rand::Rng;

/// `n` uniform random atoms in a box of side `side`, in `dims` dimensions.
fn random_atoms(rng: &mut impl Rng, n: usize, dims: usize, side: f64) -> Atoms {
    let mut axis = || {
        (0..n)
            .map(|_| rng.random::<f64>() * side)
            .collect::<Vec<f64>>()
    };
    let (x, y) = (axis(), axis());
    if dims == 3 {
        Atoms::new3(x, y, axis()).unwrap()
    } else {
        Atoms::new2(x, y).unwrap()
    }
}

/// Runs every kernel (each checks itself against the CPU reference and fails on a difference)
/// and returns the reference list.
fn every_kernel(target: &Target, atoms: &Atoms, opts: NeighborOptions) -> NeighborList {
    let (report, list) = run(target, atoms, "test", &opts, &mut |_, _| {})
        .unwrap_or_else(|e| panic!("{} atoms, {}-D, {opts:?}: {e}", atoms.len(), atoms.dims()));
    assert_eq!(report.entries, list.pairs());
    for k in &report.runs {
        assert!(
            k.equal || k.name.starts_with("find_neighbor_wrong"),
            "{}",
            k.name
        );
    }
    list
}

fn opts(double: bool) -> NeighborOptions {
    NeighborOptions {
        max_neighbors: 64,
        double,
        ..NeighborOptions::default()
    }
}

#[test]
fn every_kernel_matches_the_cpu_on_random_points_of_odd_sizes() {
    let mut rng = common::rng();
    for dims in [2, 3] {
        for n in [0, 1, 2, 31, 33, 1007] {
            let side = generate::random_box_side(n.max(1), dims);
            let atoms = random_atoms(&mut rng, n, dims, side);
            // f64 at a small and an odd large size: the same kernels, one type apart.
            for double in [false, true] {
                if double && ![2, 1007].contains(&n) {
                    continue;
                }
                let list = every_kernel(&Target::Sim, &atoms, opts(double));
                assert_eq!(list.atoms(), n);
            }
        }
    }
}

#[test]
fn a_honeycomb_has_three_neighbors_inside_and_every_kernel_agrees() {
    let atoms = generate::honeycomb(600).unwrap();
    let list = every_kernel(&Target::Sim, &atoms, opts(false));
    let hist = list.count_histogram();
    assert!(hist[3] as f64 > 0.8 * 600.0, "{hist:?}");
    assert!(
        hist.len() <= 4,
        "no atom of a honeycomb has more than 3: {hist:?}"
    );
}

#[test]
fn graphene_has_mostly_three_neighbors_in_both_precisions() {
    let atoms = graphene::graphene(1500, 7).unwrap();
    for double in [false, true] {
        let list = every_kernel(&Target::Sim, &atoms, opts(double));
        let hist = list.count_histogram();
        assert!(hist[3] as f64 > 0.85 * 1500.0, "{hist:?}");
    }
}

#[test]
fn a_periodic_box_finds_neighbors_across_its_faces() {
    let mut rng = common::rng();
    for dims in [2, 3] {
        let side = 12.0;
        let atoms = random_atoms(&mut rng, 300, dims, side);
        let list = every_kernel(
            &Target::Sim,
            &atoms,
            NeighborOptions {
                periodic: Some([side; 3]),
                ..opts(false)
            },
        );
        assert_eq!(list.atoms(), 300);
    }
    // Two atoms 0.2 apart through the x face, 11.8 apart inside the box.
    let atoms = Atoms::new2(vec![0.1, 11.9, 6.0], vec![5.0, 5.0, 5.0]).unwrap();
    let periodic = NeighborOptions {
        periodic: Some([12.0, 12.0, 12.0]),
        ..opts(false)
    };
    let list = every_kernel(&Target::Sim, &atoms, periodic);
    assert_eq!(list.neighbors(0), &[1]);
    assert_eq!(list.neighbors(2), &[] as &[u32]);
    let open = every_kernel(&Target::Sim, &atoms, opts(false));
    assert_eq!(open.pairs(), 0);
}

#[test]
fn atoms_exactly_at_the_cutoff_are_not_neighbors() {
    // 2.0 apart with cutoff 2.0: d² = 4 = cutoff², not below it. 1.999 apart: neighbors.
    let atoms = Atoms::new2(vec![0.0, 2.0, 10.0, 11.999], vec![0.0, 0.0, 0.0, 0.0]).unwrap();
    for double in [false, true] {
        let list = every_kernel(
            &Target::Sim,
            &atoms,
            NeighborOptions {
                cutoff: 2.0,
                ..opts(double)
            },
        );
        assert!(list.neighbors(0).is_empty(), "{:?}", list.neighbors(0));
        assert_eq!(list.neighbors(2), &[3]);
        assert_eq!(list.neighbors(3), &[2]);
    }
}

#[test]
fn coincident_atoms_are_each_others_neighbors() {
    let mut x = vec![3.0; 5];
    let mut y = vec![4.0; 5];
    x.extend([20.0, 20.5]);
    y.extend([20.0, 20.0]);
    let atoms = Atoms::new2(x, y).unwrap();
    let list = every_kernel(&Target::Sim, &atoms, opts(false));
    for i in 0..5u32 {
        let others: Vec<u32> = (0..5).filter(|&j| j != i).collect();
        assert_eq!(list.neighbors(i as usize), &others[..]);
    }
    assert_eq!(list.neighbors(5), &[6]);
}

#[test]
fn overflow_is_an_error_naming_the_atom_and_nothing_is_written_past_the_slots() {
    // 40 atoms within 1 Å of each other: 39 neighbors each, 4 slots each.
    let mut rng = common::rng();
    let atoms = random_atoms(&mut rng, 40, 2, 1.0);
    let opts = NeighborOptions {
        max_neighbors: 4,
        ..NeighborOptions::default()
    };
    match run(&Target::Sim, &atoms, "test", &opts, &mut |_, _| {}) {
        Err(Error::TooManyNeighbors {
            count,
            max_neighbors,
            atom,
        }) => {
            assert_eq!((count, max_neighbors), (39, 4));
            assert!(atom < 40);
        }
        other => panic!("expected TooManyNeighbors, got {other:?}"),
    }
    // The kernels themselves, with guard words after the slots: untouched.
    let target = Target::Sim;
    let cut = Cutoff::<f32>::new(1.9, None).unwrap();
    let device = DeviceAtoms::<f32>::upload(&target, &atoms).unwrap();
    let r = rule(&cut, 2);
    let (n, mn, guard) = (40usize, 4usize, 64usize);
    for kernel in BookKernel::ALL {
        let nn = target.zeros::<u32>(n).unwrap();
        let nl = target.upload(&vec![UNWRITTEN; n * mn + guard]).unwrap();
        let view = device.view();
        let cfg = gridsync::neighbor::launch::per_item(&target, n);
        // SAFETY: `view` holds 40 atoms, `nn` 40 counts, `nl` 40 × 4 slots and the guard.
        unsafe {
            match kernel {
                BookKernel::Atomic => gridsync::launch!(
                    target,
                    gridsync::gpu::lessons::neighbor::find_neighbor_atomic_f32,
                    cfg,
                    (nn.ptr(), nl.ptr(), view, n as u32, mn as u32, r)
                ),
                BookKernel::NoAtomic => gridsync::launch!(
                    target,
                    gridsync::gpu::lessons::neighbor::find_neighbor_no_atomic_f32,
                    cfg,
                    (nn.ptr(), nl.ptr(), view, n as u32, mn as u32, r, 1u32)
                ),
                BookKernel::Wrong => gridsync::launch!(
                    target,
                    gridsync::gpu::lessons::neighbor::find_neighbor_wrong_f32,
                    cfg,
                    (nn.ptr(), nl.ptr(), view, n as u32, mn as u32, r)
                ),
            }
        }
        .unwrap();
        let nl = target.download(&nl).unwrap();
        assert!(
            nl[n * mn..].iter().all(|&w| w == UNWRITTEN),
            "{kernel:?} wrote past the slots"
        );
        assert!(
            target.download(&nn).unwrap().iter().all(|&c| c == 39),
            "{kernel:?}: counts go on counting"
        );
    }
    // The cell list's padded pass too.
    let plan = gridsync::neighbor::launch::CellPlan::new(&atoms, 1.9, None).unwrap();
    let mut cells = gridsync::neighbor::launch::CellList::new(&target, &device, &plan, r).unwrap();
    let padded = cells.build_padded(mn, gpu_layout()).unwrap();
    assert!(padded.nn.iter().all(|&c| c == 39));
    assert!(matches!(
        padded.to_list(),
        Err(Error::TooManyNeighbors { count: 39, .. })
    ));
    // CSR sizes itself exactly.
    let csr = cells.build_csr().unwrap();
    assert_eq!(csr.pairs(), 40 * 39);
}

/// The CSR build with room reserved beforehand: too little (the fill writes nothing, the
/// build grows the buffer and fills again) and enough (one fill) give the same list.
fn csr_with_room_reserved(target: &Target) {
    let atoms = graphene::graphene(3000, 5).unwrap();
    let cut = Cutoff::<f32>::new(1.9, None).unwrap();
    let device = DeviceAtoms::<f32>::upload(target, &atoms).unwrap();
    let plan = gridsync::neighbor::launch::CellPlan::new(&atoms, 1.9, None).unwrap();
    let expected = sheet_in_f32(&atoms, &cut);
    for room in [
        1,
        expected.pairs() as u64 - 1,
        expected.pairs() as u64,
        100_000,
    ] {
        for in_atom_order in [true, false] {
            let mut cells =
                gridsync::neighbor::launch::CellList::new(target, &device, &plan, rule(&cut, 2))
                    .unwrap();
            cells.set_fill_in_atom_order(in_atom_order);
            cells.reserve_entries(room).unwrap();
            let got = cells.build_csr().unwrap();
            assert_eq!(expected.first_difference(&got), None, "room {room}");
        }
    }
}

#[test]
fn the_cell_lists_fill_is_right_with_too_little_or_enough_room_reserved() {
    csr_with_room_reserved(&Target::Sim);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_the_cell_lists_fill_is_right_with_too_little_or_enough_room_reserved() {
    csr_with_room_reserved(&common::gpu());
}

fn gpu_layout() -> gridsync::gpu::lessons::neighbor::Layout {
    gridsync::gpu::lessons::neighbor::Layout::PerAtom
}

#[test]
fn the_mistake_never_writes_out_of_bounds_and_its_corruption_is_reported() {
    let atoms = graphene::graphene(800, 3).unwrap();
    let target = Target::Sim;
    let cut = Cutoff::<f32>::new(1.9, None).unwrap();
    let device = DeviceAtoms::<f32>::upload(&target, &atoms).unwrap();
    let run = BookRun::new(&target, &device, rule(&cut, 2), BookKernel::Wrong, 10).unwrap();
    let padded = run.run().unwrap();
    let expected = sheet_in_f32(&atoms, &cut);
    // The counts are right whatever the race did: every add happens.
    let counts: Vec<u32> = expected.counts().map(|c| c as u32).collect();
    assert_eq!(padded.nn, counts);
    // A corrupted copy is recognized as such: one slot overwritten, one never written.
    let mut bad = padded.clone();
    let a = (0..bad.nn.len()).find(|&n| bad.nn[n] >= 2).unwrap();
    bad.nl[a * 10 + 1] = bad.nl[a * 10];
    bad.nl[a * 10] = UNWRITTEN;
    let c = corruption(&bad, &expected);
    assert!(c.atoms >= 1 && c.unwritten >= 1 && c.lost >= 1, "{c:?}");
    assert!(c.example.unwrap().contains("never written"));
}

/// The CPU's list of a 2-D sheet's atoms rounded to `f32`, as the `f32` kernels see them.
fn sheet_in_f32(atoms: &Atoms, cut: &Cutoff<f32>) -> NeighborList {
    let (x, y) = (to_f32(atoms.x()), to_f32(atoms.y()));
    half_pairs(
        &gridsync::neighbor::reference::Coords {
            x: &x,
            y: &y,
            z: None,
        },
        cut,
    )
    .unwrap()
}

fn to_f32(v: &[f64]) -> Vec<f32> {
    v.iter().map(|&c| c as f32).collect()
}

#[test]
fn bad_inputs_are_clear_errors() {
    let atoms = Atoms::new2(vec![0.0, 1.0], vec![0.0, 0.0]).unwrap();
    for cutoff in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let o = NeighborOptions {
            cutoff,
            ..opts(false)
        };
        assert!(
            matches!(
                run(&Target::Sim, &atoms, "t", &o, &mut |_, _| {}),
                Err(Error::InvalidInput(_))
            ),
            "cutoff {cutoff}"
        );
    }
    let nan = Atoms::new2(vec![0.0, f64::NAN, 2.0], vec![0.0, 0.0, 0.0]).unwrap();
    match run(&Target::Sim, &nan, "t", &opts(false), &mut |_, _| {}) {
        Err(Error::InvalidInput(m)) => assert!(m.contains("atom 1"), "{m}"),
        other => panic!("{other:?}"),
    }
    // Finite in f64, infinite in f32.
    let huge = Atoms::new2(vec![0.0, 1e39], vec![0.0, 0.0]).unwrap();
    assert!(run(&Target::Sim, &huge, "t", &opts(false), &mut |_, _| {}).is_err());
    // Outside the periodic box.
    let o = NeighborOptions {
        periodic: Some([10.0; 3]),
        ..opts(false)
    };
    assert!(matches!(
        run(
            &Target::Sim,
            &Atoms::new2(vec![0.0, 10.5], vec![1.0, 1.0]).unwrap(),
            "t",
            &o,
            &mut |_, _| {}
        ),
        Err(Error::InvalidInput(_))
    ));
    // 20000 atoms on one spot: refused from the plan, before any pair is searched — its
    // estimate names the crowd (every atom in one cell) and the 4·10⁸ pair checks.
    let spot = Atoms::new2(vec![1.0; 20_000], vec![1.0; 20_000]).unwrap();
    match neighbor_list_sim(&spot) {
        Err(Error::InvalidInput(m)) => {
            assert!(
                m.contains("crowded") && m.contains("20000 atoms share one cell"),
                "{m}"
            );
            assert!(m.contains("4.00e8 pairs"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    // 600 on one spot: sized exactly.
    let spot = Atoms::new2(vec![1.0; 600], vec![1.0; 600]).unwrap();
    assert_eq!(neighbor_list_sim(&spot).unwrap().pairs(), 600 * 599);
}

fn neighbor_list_sim(atoms: &Atoms) -> gridsync::Result<NeighborList> {
    gridsync::neighbor::build::<f32>(&Target::Sim, atoms, 1.9, None)
}

#[test]
fn the_library_call_takes_nalgebra_points_in_both_precisions() {
    let mut rng = common::rng();
    // ANCHOR: library_call
    let p2: Vec<Point2<f32>> = (0..500)
        .map(|_| Point2::new(rng.random::<f32>() * 30.0, rng.random::<f32>() * 30.0))
        .collect();
    let list = neighbor_list(&Target::Sim, &p2, 1.9).unwrap();
    for i in 0..p2.len() {
        let want: Vec<u32> = (0..p2.len() as u32)
            .filter(|&j| {
                j as usize != i && {
                    let d = p2[j as usize] - p2[i];
                    d.x * d.x + d.y * d.y < 1.9f32 * 1.9f32
                }
            })
            .collect();
        assert_eq!(list.neighbors(i), &want[..], "point {i}");
    }
    // ANCHOR_END: library_call
    let p3: Vec<Point3<f64>> = (0..400)
        .map(|_| {
            Point3::new(
                rng.random::<f64>() * 8.0,
                rng.random::<f64>() * 8.0,
                rng.random::<f64>() * 8.0,
            )
        })
        .collect();
    let list = neighbor_list(&Target::Sim, &p3, 1.9).unwrap();
    let mut bonds = 0;
    for i in 0..p3.len() {
        for j in 0..p3.len() {
            if i != j && (p3[i] - p3[j]).norm_squared() < 1.9 * 1.9 {
                bonds += 1;
                assert!(list.neighbors(i).contains(&(j as u32)));
            }
        }
    }
    assert_eq!(list.pairs(), bonds);
    assert!(
        neighbor_list::<Point2<f32>>(&Target::Sim, &[], 1.9)
            .unwrap()
            .atoms()
            == 0
    );
    assert_eq!(
        neighbor_list(&Target::Sim, &[Point2::new(1.0f32, 2.0)], 1.9)
            .unwrap()
            .neighbors(0),
        &[] as &[u32]
    );
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_every_kernel_matches_the_cpu() {
    let target = common::gpu();
    let mut rng = common::rng();
    let sheet = graphene::graphene(22_464, 1).unwrap();
    for double in [false, true] {
        every_kernel(
            &target,
            &sheet,
            NeighborOptions {
                double,
                ..NeighborOptions::default()
            },
        );
    }
    for (n, dims) in [(1, 2), (33, 3), (100_007, 2), (200_003, 3)] {
        let side = generate::random_box_side(n, dims);
        let atoms = random_atoms(&mut rng, n, dims, side);
        every_kernel(
            &target,
            &atoms,
            NeighborOptions {
                all_pairs_max_atoms: 50_000,
                ..opts(false)
            },
        );
        // A box more than twice the cutoff wide, holding every atom.
        let o = NeighborOptions {
            periodic: Some([side.max(4.0); 3]),
            all_pairs_max_atoms: 50_000,
            ..opts(true)
        };
        every_kernel(&target, &atoms, o);
    }
    let big = graphene::graphene(1_000_000, 2).unwrap();
    every_kernel(
        &target,
        &big,
        NeighborOptions {
            all_pairs_max_atoms: 0,
            ..NeighborOptions::default()
        },
    );
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_the_mistake_corrupts_the_books_sheet_and_overflow_is_an_error() {
    let target = common::gpu();
    let sheet = graphene::graphene(22_464, 1).unwrap();
    let (report, _) = run(
        &target,
        &sheet,
        "t",
        &NeighborOptions::default(),
        &mut |_, _| {},
    )
    .unwrap();
    let c = report.mistake.expect("the mistake ran");
    // Thousands of threads append to neighboring atoms at once: some lists come out wrong.
    assert!(c.atoms > 0 && c.lost > 0, "{c:?}");
    let o = NeighborOptions {
        max_neighbors: 2,
        ..NeighborOptions::default()
    };
    assert!(matches!(
        run(&target, &sheet, "t", &o, &mut |_, _| {}),
        Err(Error::TooManyNeighbors { .. })
    ));
}

/// The device scan's scratch, as `gridsync`'s own scan keeps it: two sets of tile words and
/// tickets, the total and the timeout count.
struct ScanScratch {
    words: Buffer<u64>,
    tickets: Buffer<u32>,
    tiles: usize,
    total: Buffer<u64>,
    timeouts: Buffer<u32>,
    set: usize,
}

impl ScanScratch {
    fn new(t: &Target, max_len: usize) -> ScanScratch {
        use gridsync::gpu::lessons::neighbor::SCAN_TILE;
        let tiles = max_len.div_ceil(SCAN_TILE as usize).max(1);
        ScanScratch {
            words: t.zeros(2 * tiles).unwrap(),
            tickets: t.zeros(2).unwrap(),
            tiles,
            total: t.zeros(1).unwrap(),
            timeouts: t.zeros(1).unwrap(),
            set: 0,
        }
    }

    /// Launches `scan_lookback` over `counts` on `blocks` blocks of `threads`, bounded by
    /// `timeout_ns`: `out` (the exclusive prefix sums and the total after them), the total, and
    /// the blocks that timed out.
    fn scan(
        &mut self,
        t: &Target,
        counts: &[u32],
        (blocks, threads): (u32, u32),
        timeout_ns: u64,
    ) -> (Vec<u32>, u64, u32) {
        use gridsync::LaunchConfig;
        use gridsync::gpu::lessons::neighbor::{LookBack, scan_lookback, scan_shared_bytes};
        let len = counts.len();
        let input = t.upload(counts).unwrap();
        let out = t.zeros::<u32>(len + 1).unwrap();
        let lb = LookBack::alternating(
            (self.words.ptr(), self.tickets.ptr(), self.tiles),
            self.set,
            self.total.ptr(),
            self.timeouts.ptr(),
            timeout_ns,
        );
        let cfg =
            LaunchConfig::linear(blocks, threads).with_shared_bytes(scan_shared_bytes(threads));
        // SAFETY: `input` holds `len` counts, `out` `len + 1`; the scratch as `LookBack` asks
        // (this scan's set zero: fresh, or cleared by the scan before).
        unsafe {
            gridsync::launch!(
                t,
                scan_lookback,
                cfg,
                (input.ptr().cast_const(), len as u32, out.ptr(), lb)
            )
            .unwrap();
        }
        self.set = 1 - self.set;
        (
            t.download(&out).unwrap(),
            t.download(&self.total).unwrap()[0],
            t.download(&self.timeouts).unwrap()[0],
        )
    }
}

/// The exclusive prefix sums of `counts` and the total after them, on the CPU.
fn scan_on_cpu(counts: &[u32]) -> (Vec<u32>, u64) {
    let mut want = Vec::with_capacity(counts.len() + 1);
    let mut sum = 0u64;
    for &c in counts {
        want.push(sum as u32);
        sum += c as u64;
    }
    want.push(sum as u32);
    (want, sum)
}

/// Every length (none, one, a tile ± 1, several tiles) at every block size, on a grid of one
/// block per tile; several tiles also on fewer blocks than tiles (a block takes several) and on
/// more (some take none). One scratch for all, so every scan runs on words the scan before it
/// cleared.
fn scans_match_the_cpu_at_any_block_size(
    t: &Target,
    block_sizes: &[u32],
    max_threads: u32,
    long: usize,
) {
    use gridsync::gpu::lessons::neighbor::SCAN_TILE;
    let mut rng = common::rng();
    let mut scratch = ScanScratch::new(t, long);
    let tile = SCAN_TILE as usize;
    for &threads in block_sizes {
        for len in [0, 1, tile - 1, tile, tile + 1, 5000, 40_000, long] {
            // Many tiles (the look-back past its first window) in the library's blocks, and in
            // blocks of half a warp (a window of 64 tiles, on more blocks than the simulator
            // can run of 256 threads).
            if len > 5000 && threads != 256 && threads != 16 {
                continue;
            }
            let tiles = len.div_ceil(SCAN_TILE as usize).max(1) as u32;
            let grids: &[u32] = if len == 5000 {
                &[tiles, 3, tiles + 2]
            } else {
                &[tiles]
            };
            for blocks in grids.iter().map(|&b| b.min(max_threads / threads)) {
                // Counts up to the largest `u32` in odd lengths: the total passes 32 bits.
                let top = if len % 2 == 0 { 1000 } else { u32::MAX };
                let counts: Vec<u32> = (0..len).map(|_| rng.random_range(0..=top)).collect();
                let (want, sum) = scan_on_cpu(&counts);
                let (got, total, timeouts) =
                    scratch.scan(t, &counts, (blocks, threads), 1_000_000_000);
                let at = format!("{threads} threads, {blocks} blocks, {len} counts");
                assert_eq!(timeouts, 0, "{at}");
                assert_eq!(total, sum, "{at}");
                assert_eq!(got, want, "{at}");
            }
        }
    }
}

#[test]
fn the_device_scan_is_right_at_any_block_size() {
    // Blocks of a thousand OS threads are slow on the simulator; the GPU test takes them. 300
    // threads take four counts each too, some with none left in the tile.
    let most = gridsync::gpu::sim::MAX_THREADS as u32;
    scans_match_the_cpu_at_any_block_size(&Target::Sim, &[16, 32, 96, 256, 300], most, 150_000);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_the_device_scan_is_right_at_any_block_size() {
    scans_match_the_cpu_at_any_block_size(
        &common::gpu(),
        &[16, 32, 96, 256, 300, 1000, 1024],
        u32::MAX,
        3_000_000,
    );
}

/// A scan whose first tile never comes: its ticket already taken, so no block scans tile 0. The
/// others wait for it, time out after their bound and say so, instead of hanging.
fn a_scan_missing_a_tile_times_out(t: &Target) {
    let mut scratch = ScanScratch::new(t, 5000);
    t.write(&scratch.tickets, &[1, 0]).unwrap();
    let counts = vec![1u32; 5000];
    let start = std::time::Instant::now();
    let (_, _, timeouts) = scratch.scan(t, &counts, (5, 256), 20_000_000);
    assert!(timeouts > 0, "no block timed out");
    assert!(start.elapsed() < std::time::Duration::from_secs(60));
    // The next scan runs on the set that one cleared, and is right.
    t.clear(&scratch.timeouts).unwrap();
    let (got, total, timeouts) = scratch.scan(t, &counts, (5, 256), 1_000_000_000);
    assert_eq!((timeouts, total), (0, 5000));
    assert_eq!(got, scan_on_cpu(&counts).0);
}

#[test]
fn a_device_scan_missing_a_tile_times_out() {
    a_scan_missing_a_tile_times_out(&Target::Sim);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_a_device_scan_missing_a_tile_times_out() {
    a_scan_missing_a_tile_times_out(&common::gpu());
}
