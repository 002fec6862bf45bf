//! Properties over generated inputs (proptest): what must hold for any input, not only the
//! ones written down — splitting over any number of devices changes no result, the cell list
//! finds exactly the pairs the brute-force loop finds (any points, cutoff, open or periodic
//! box; the kernels on the simulator), `xy.txt` and the book's padded tables round-trip.
//! A failing case is shrunk to a small one and printed; `PROPTEST_CASES` sets how many run.

use gridsync::Target;
use gridsync::multi::{self, Combiner, DeviceSet, Op, ReducePlan};
use gridsync::neighbor::list::PaddedLayout;
use gridsync::neighbor::reference::{Coords, Cutoff, half_pairs};
use gridsync::neighbor::xy::{format_xy, parse_xy};
use gridsync::neighbor::{Atoms, NeighborList, build, cell_list::cell_list};
use proptest::collection::vec;
use proptest::prelude::*;

/// Cases per property: the simulator runs every kernel on OS threads, so fewer than proptest's
/// default of 256 (more with `PROPTEST_CASES`).
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(cases),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(8))]

    /// One-shot calls and a prepared plan on `devices` simulated devices give what one device
    /// gives: counts and min/max exactly, sums within the f64 accumulation's bound.
    #[test]
    fn any_split_over_any_devices_equals_one_device(
        devices in 1usize..=5,
        x in vec(-1e3f32..1e3, 0..1200),
        bytes in vec(any::<u8>(), 0..1200),
        threshold in -1e3f32..1e3,
    ) {
        let one = DeviceSet::simulated(1).unwrap();
        let set = DeviceSet::simulated(devices).unwrap();
        prop_assert_eq!(multi::histogram(&set, &bytes).unwrap(), multi::histogram(&one, &bytes).unwrap());
        prop_assert_eq!(
            multi::count_above(&set, &x, threshold).unwrap(),
            multi::count_above(&one, &x, threshold).unwrap()
        );
        let (s1, lo1, hi1) = multi::sum_min_max(&one, &x).unwrap();
        let (s, lo, hi) = multi::sum_min_max(&set, &x).unwrap();
        prop_assert!(lo.to_bits() == lo1.to_bits() || (lo.is_nan() && lo1.is_nan()));
        prop_assert!(hi.to_bits() == hi1.to_bits() || (hi.is_nan() && hi1.is_nan()));
        let abs: f64 = x.iter().map(|&v| v.abs() as f64).sum();
        prop_assert!((s - s1).abs() <= 1e-12 * abs.max(1.0), "{} vs {}", s, s1);
        // Kept on the devices and combined by the fallback combine.
        let on = set.scatter(&x).unwrap();
        let combiner = Combiner::open(&set).unwrap();
        use gridsync::gpu::lessons::reduce::SumF32InF64;
        let planned = ReducePlan::<SumF32InF64>::new(&set, &on, Op::Sum).unwrap().run(&combiner).unwrap();
        prop_assert!((planned - s1).abs() <= 1e-12 * abs.max(1.0));
    }
}

/// Up to `n` points uniform in a box of `side` (each coordinate below `side`), 2-D or 3-D.
fn points(n: usize, dims: usize, side: f64) -> impl Strategy<Value = Atoms> {
    let axis = move || vec(0.0..side, n..=n);
    (axis(), axis(), axis()).prop_map(move |(x, y, z)| {
        // Rounded to f32 (the kernels' precision) while still inside the box.
        let inside = |v: Vec<f64>| -> Vec<f64> {
            v.into_iter()
                .map(|c| {
                    let r = c as f32 as f64;
                    if r < side { r } else { 0.0 }
                })
                .collect()
        };
        if dims == 3 {
            Atoms::new3(inside(x), inside(y), inside(z)).unwrap()
        } else {
            Atoms::new2(inside(x), inside(y)).unwrap()
        }
    })
}

fn brute_force(atoms: &Atoms, cutoff: f64, periodic: Option<[f64; 3]>) -> NeighborList {
    let (x, y, z) = atoms.rounded::<f32>();
    let c = Coords {
        x: &x,
        y: &y,
        z: z.as_deref(),
    };
    let cut = Cutoff::<f32>::new(cutoff, periodic).unwrap();
    let want = half_pairs(&c, &cut).unwrap();
    // The CPU cell list, the reference for large inputs, agrees too.
    assert_eq!(cell_list(&c, &cut).unwrap().first_difference(&want), None);
    want
}

proptest! {
    #![proptest_config(config(24))]

    /// The cell list on the simulator (bin, scan, scatter, search) equals the brute-force
    /// O(N²) loop for any points, cutoff and box.
    #[test]
    fn the_cell_list_equals_the_brute_force_loop(
        (atoms, cutoff, periodic) in (0usize..160, 2usize..=3, 0.3f64..4.0, any::<bool>(), 2.5f64..25.0)
            .prop_flat_map(|(n, dims, cutoff, periodic, side)| {
                // A periodic side must exceed twice the cutoff.
                let side = if periodic { side.max(2.0 * cutoff * 1.01) } else { side };
                (points(n, dims, side), Just(cutoff), Just(periodic.then_some([side; 3])))
            })
    ) {
        let want = brute_force(&atoms, cutoff, periodic);
        let got = build::<f32>(&Target::Sim, &atoms, cutoff, periodic).unwrap();
        prop_assert_eq!(got.first_difference(&want), None);
    }
}

/// A valid neighbor list of up to `atoms` atoms: each row a set of other atoms.
fn neighbor_lists(atoms: usize) -> impl Strategy<Value = NeighborList> {
    (0..=atoms)
        .prop_flat_map(|n| vec(vec(0..n.max(1) as u32, 0..8), n..=n))
        .prop_map(|rows| {
            let mut offsets = vec![0u32];
            let mut indices = Vec::new();
            for (i, row) in rows.iter().enumerate() {
                let mut row: Vec<u32> = row.iter().copied().filter(|&j| j as usize != i).collect();
                row.sort_unstable();
                row.dedup();
                indices.extend(row);
                offsets.push(indices.len() as u32);
            }
            NeighborList::from_parts(offsets, indices).unwrap()
        })
}

proptest! {
    #![proptest_config(config(256))]

    /// `xy.txt` written and read back gives the same atoms, to the bit. (No atoms leave no
    /// line to say the dimension: an empty file reads as 2-D, so 3-D sets start at one atom.)
    #[test]
    fn xy_files_round_trip(
        (xs, three) in any::<bool>().prop_flat_map(|three| {
            (vec((any::<f64>(), any::<f64>(), any::<f64>()), three as usize..50), Just(three))
        }),
    ) {
        let finite = |v: f64| if v.is_finite() { v } else { 0.5 };
        let x: Vec<f64> = xs.iter().map(|p| finite(p.0)).collect();
        let y: Vec<f64> = xs.iter().map(|p| finite(p.1)).collect();
        let atoms = if three {
            Atoms::new3(x, y, xs.iter().map(|p| finite(p.2)).collect()).unwrap()
        } else {
            Atoms::new2(x, y).unwrap()
        };
        prop_assert_eq!(parse_xy(&format_xy(&atoms)).unwrap(), atoms);
    }

    /// A CSR list written into the book's padded table, in either layout, with any room per
    /// atom from its longest row up, reads back as the same list; and so does the book's
    /// `neighbor.txt`.
    #[test]
    fn csr_and_padded_tables_round_trip(list in neighbor_lists(40), extra in 0usize..4) {
        let mn = list.max_count() + extra;
        let n = list.atoms();
        for layout in [PaddedLayout::PerAtom, PaddedLayout::Transposed] {
            let mut nl = vec![u32::MAX; n * mn];
            let nn: Vec<u32> = list.counts().map(|c| c as u32).collect();
            for a in 0..n {
                for (k, &j) in list.neighbors(a).iter().enumerate() {
                    let slot = match layout {
                        PaddedLayout::PerAtom => a * mn + k,
                        PaddedLayout::Transposed => k * n + a,
                    };
                    nl[slot] = j;
                }
            }
            let back = NeighborList::from_padded(&nn, &nl, mn, layout).unwrap();
            prop_assert_eq!(&back, &list);
        }
        let mut text = Vec::new();
        list.write_book_format(&mut text, mn).unwrap();
        let back = NeighborList::read_book_format(std::str::from_utf8(&text).unwrap()).unwrap();
        prop_assert_eq!(back, list);
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// `histogram::first_difference` names the first bin the two histograms disagree on (a bin
    /// only one has counts as disagreeing), and `None` exactly when they are equal.
    #[test]
    fn the_first_different_bin_is_the_first_disagreement(
        got in vec(0u64..3, 0..12),
        want in vec(0u64..3, 0..12),
    ) {
        match gridsync::histogram::first_difference(&got, &want) {
            None => prop_assert_eq!(&got, &want),
            Some(b) => {
                prop_assert_ne!(got.get(b), want.get(b));
                prop_assert!((0..b).all(|i| got.get(i) == want.get(i)));
            }
        }
    }

    /// `Step::distinct_results` counts the results bit for bit (0.0 and -0.0 apart), and is an
    /// error exactly for a deterministic step with more than one.
    #[test]
    fn distinct_results_are_counted_and_refused_where_the_step_is_deterministic(
        values in vec(prop_oneof![Just(1.0f64), Just(-0.0), Just(0.0), Just(f64::NAN)], 1..6),
    ) {
        use gridsync::reduce::Step;
        let mut bits: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
        bits.sort_unstable();
        bits.dedup();
        for step in [Step::Vec, Step::Atomic] {
            match step.distinct_results("k", &values) {
                Ok(n) => {
                    prop_assert_eq!(n, bits.len());
                    prop_assert!(n == 1 || !step.deterministic());
                }
                Err(e) => {
                    prop_assert!(step.deterministic() && bits.len() > 1);
                    prop_assert!(e.to_string().contains("k is deterministic"), "{}", e);
                }
            }
        }
    }
}
