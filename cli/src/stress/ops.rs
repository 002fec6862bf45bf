//! The operations of the endurance run: each draws a random input of a random size (0, 1, odd
//! sizes, sizes around the block and tile sizes, large ones), runs one of gridsync's calls on
//! it, and checks the result against the CPU — an `Err` is a failure, a
//! [`Error::Mismatch`] a wrong result.

use gpu::lessons::neighbor::Coord;
use gridsync::barrier::{self, BarrierOptions};
use gridsync::histogram::{self, Bins, histogram_cpu};
use gridsync::inputs::{splitmix64, uniform_f32};
use gridsync::locks::{self, Shape};
use gridsync::multi::{self, DeviceSet};
use gridsync::neighbor::cell_list::cell_list;
use gridsync::neighbor::reference::{Coords, Cutoff, Real, half_pairs};
use gridsync::neighbor::{Atoms, NeighborList, REFERENCE_ALL_PAIRS_MAX, build, generate};
use gridsync::normalize::{normalize, normalize_cpu};
use gridsync::primitives::lock::MutexBounds;
use gridsync::reduce::{self, Accumulate};
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use serde::Serialize;
use std::time::Duration;

/// One kind of operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Σ (f64 accumulation), min and max of floats, and a wrapping Σ of integers.
    Reduce,
    /// 256- and 128-bin histograms of bytes.
    Histogram,
    /// Floats above a threshold, through the staged upload of `gridsync::multi`.
    CountAbove,
    /// `a ← a / Σa` on a stream.
    Normalize,
    /// Threads of a random grid taking [`gpu::lock::Mutex`] around a counter.
    Mutex,
    /// The same with one leader lane per warp.
    WarpLeader,
    /// The same with the ticket lock.
    Ticket,
    /// X→P→X with [`gpu::grid::GridBarrier`] between the stages, in one launch (plain or
    /// cooperative).
    GridBarrier,
    /// The cell list of random points (2-D or 3-D, `f32` or `f64`, open or periodic).
    Neighbor,
}

impl Op {
    /// Every operation.
    pub const ALL: [Op; 9] = [
        Op::Reduce,
        Op::Histogram,
        Op::CountAbove,
        Op::Normalize,
        Op::Mutex,
        Op::WarpLeader,
        Op::Ticket,
        Op::GridBarrier,
        Op::Neighbor,
    ];

    /// The name the command line and the report use.
    pub fn name(self) -> &'static str {
        match self {
            Op::Reduce => "reduce",
            Op::Histogram => "histogram",
            Op::CountAbove => "count-above",
            Op::Normalize => "normalize",
            Op::Mutex => "mutex",
            Op::WarpLeader => "warp-leader",
            Op::Ticket => "ticket",
            Op::GridBarrier => "grid-barrier",
            Op::Neighbor => "neighbor",
        }
    }
}

impl std::str::FromStr for Op {
    type Err = Error;

    fn from_str(s: &str) -> Result<Op> {
        gridsync::runtime::error::parse_label(&Op::ALL, Op::name, "operation", s)
    }
}

/// Random draws for one operation, from its seed (SplitMix64, as the input generators).
pub(crate) struct Draw {
    seed: u64,
    next: u64,
}

impl Draw {
    pub(crate) fn new(seed: u64) -> Draw {
        Draw { seed, next: 0 }
    }

    fn u64(&mut self) -> u64 {
        self.next += 1;
        splitmix64(self.seed ^ splitmix64(self.next))
    }

    /// Uniform in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.u64() % (hi - lo + 1)
    }

    fn coin(&mut self) -> bool {
        self.u64() & 1 == 1
    }

    /// A length up to `max`: often one of the edges (0, 1, around a warp, a block of 256 and
    /// a scan tile of 1024, odd), else uniform on a log scale.
    fn len(&mut self, max: usize) -> usize {
        const EDGES: [usize; 10] = [0, 1, 2, 31, 33, 255, 257, 1023, 1025, 4099];
        let n = if self.range(0, 3) == 0 {
            EDGES[self.range(0, EDGES.len() as u64 - 1) as usize]
        } else {
            let bits = self.range(0, 64 - (max.max(1) as u64).leading_zeros() as u64);
            self.range(0, (1u64 << bits).min(max as u64)) as usize
        };
        n.min(max)
    }

    /// A seed for an input generator.
    fn seed(&mut self) -> u64 {
        self.u64()
    }
}

/// The limits of the sizes drawn: smaller on the simulator, which runs each GPU thread on an
/// OS thread.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// Elements of the arrays (floats, bytes).
    pub len: usize,
    /// Atoms of the neighbor lists.
    pub atoms: usize,
    /// Blocks of the lock and barrier grids.
    pub blocks: u32,
    /// Threads per block of the lock grids: on the simulator every waiting thread is an OS
    /// thread the holder competes with for the host's cores.
    pub threads: u32,
    /// How long a lock or barrier may wait before it gives up (far above any real wait, even
    /// with other streams' kernels on the GPU).
    pub timeout: Duration,
}

impl Limits {
    pub(crate) fn for_target(target: &Target) -> Limits {
        match target {
            Target::Gpu(g) => Limits {
                len: 1 << 22,
                atoms: 50_000,
                blocks: 2 * g.info().sm_count,
                threads: 256,
                timeout: Duration::from_secs(10),
            },
            Target::Sim => Limits {
                len: 1 << 12,
                atoms: 400,
                blocks: 2,
                threads: 64,
                timeout: Duration::from_secs(10),
            },
        }
    }
}

/// Runs `op` once on the one device of `set` with inputs drawn from `seed`; returns what it did,
/// for the report's lines.
///
/// # Errors
/// [`Error::Mismatch`] naming the operation, its size and the difference; any error of the call.
pub(crate) fn run(op: Op, set: &DeviceSet, limits: Limits, seed: u64) -> Result<String> {
    let mut d = Draw::new(seed);
    let t = &set.targets()[0];
    match op {
        Op::Reduce => reduce(t, &mut d, limits),
        Op::Histogram => histogram(t, &mut d, limits),
        Op::CountAbove => count_above(set, &mut d, limits),
        Op::Normalize => normalize_op(t, &mut d, limits),
        Op::Mutex => lock(t, &mut d, limits, locks::Variant::Mutex),
        Op::WarpLeader => lock(t, &mut d, limits, locks::Variant::WarpLeader),
        Op::Ticket => lock(t, &mut d, limits, locks::Variant::Ticket),
        Op::GridBarrier => grid_barrier(t, &mut d, limits),
        Op::Neighbor => neighbor(t, &mut d, limits),
    }
}

fn mismatch(what: String) -> Error {
    Error::Mismatch(what)
}

fn same_f32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()) || (a == b)
}

fn reduce(t: &Target, d: &mut Draw, limits: Limits) -> Result<String> {
    let n = d.len(limits.len);
    let scale = [1e-3f32, 1.0, 1e6][d.range(0, 2) as usize];
    let x = uniform_f32(n, d.seed(), -scale, scale);
    let got = reduce::sum_with(t, &x, Accumulate::F64)?;
    let exact: f64 = x.iter().map(|&v| v as f64).sum();
    let abs: f64 = x.iter().map(|&v| v.abs() as f64).sum();
    // Both sums accumulate in f64: each within (terms + 64)·2⁻⁵³·Σ|x| of the exact value.
    let bound = 2.0 * (n as f64 + 64.0) * f64::EPSILON * abs;
    if (got - exact).abs() > bound {
        return Err(mismatch(format!(
            "Σ of {n} floats: {got} against the CPU's {exact} (bound {bound:e})"
        )));
    }
    if n == 0 {
        // An empty array has no minimum: the documented error, not a value.
        let refused = |r: Result<f32>| matches!(r, Err(Error::InvalidInput(_)));
        if !refused(reduce::min(t, &x)) || !refused(reduce::max(t, &x)) {
            return Err(mismatch("min/max of no floats were not refused".into()));
        }
    } else {
        let (lo, hi) = (reduce::min(t, &x)?, reduce::max(t, &x)?);
        let want_lo = x.iter().copied().fold(f32::NAN, f32::min);
        let want_hi = x.iter().copied().fold(f32::NAN, f32::max);
        if !same_f32(lo, want_lo) || !same_f32(hi, want_hi) {
            return Err(mismatch(format!(
                "min/max of {n} floats: {lo}/{hi} against the CPU's {want_lo}/{want_hi}"
            )));
        }
    }
    let ints: Vec<i32> = (0..n).map(|_| d.u64() as i32).collect();
    let got = reduce::sum_i32(t, &ints)?;
    let want = ints.iter().fold(0i32, |s, &v| s.wrapping_add(v));
    if got != want {
        return Err(mismatch(format!(
            "wrapping Σ of {n} i32: {got} against the CPU's {want}"
        )));
    }
    Ok(format!("{n} elements"))
}

fn histogram(t: &Target, d: &mut Draw, limits: Limits) -> Result<String> {
    let n = d.len(limits.len);
    let data = if d.coin() {
        histogram::uniform_bytes(n, d.seed())
    } else {
        // Text-like: few distinct bytes, many repeats (the contended case).
        let seed = d.seed();
        (0..n)
            .map(|i| b"etaoin shrdlu\n"[(splitmix64(seed ^ i as u64) % 14) as usize])
            .collect()
    };
    let byte = histogram::histogram(t, &data)?;
    if byte[..] != histogram_cpu(&data, Bins::Byte)[..] {
        return Err(mismatch(format!("the 256-bin histogram of {n} bytes")));
    }
    let ascii = histogram::histogram_ascii(t, &data)?;
    if ascii[..] != histogram_cpu(&data, Bins::Ascii)[..] {
        return Err(mismatch(format!("the 128-bin histogram of {n} bytes")));
    }
    Ok(format!("{n} bytes"))
}

fn count_above(set: &DeviceSet, d: &mut Draw, limits: Limits) -> Result<String> {
    let n = d.len(limits.len);
    let x = uniform_f32(n, d.seed(), -1.0, 1.0);
    let threshold = [-2.0f32, -0.5, 0.0, 0.999, 2.0][d.range(0, 4) as usize];
    let got = multi::count_above(set, &x, threshold)?;
    let want = x.iter().filter(|&&v| v > threshold).count() as u64;
    if got != want {
        return Err(mismatch(format!(
            "{n} floats above {threshold}: {got}, the CPU counts {want}"
        )));
    }
    Ok(format!("{n} floats"))
}

fn normalize_op(t: &Target, d: &mut Draw, limits: Limits) -> Result<String> {
    let n = d.len(limits.len).max(1);
    let data = uniform_f32(n, d.seed(), 0.5, 2.0);
    let mut x = data.clone();
    normalize(t, &mut x)?;
    let Some((_, want)) = normalize_cpu(&data) else {
        return Err(mismatch(format!("{n} positive floats have no usable sum")));
    };
    if let Some(i) = (0..n).find(|&i| (x[i] - want[i]).abs() > 2.0 * f32::EPSILON * want[i].abs()) {
        return Err(mismatch(format!(
            "normalized {n} floats: element {i} is {}, the CPU's {}",
            x[i], want[i]
        )));
    }
    Ok(format!("{n} floats"))
}

fn lock(t: &Target, d: &mut Draw, limits: Limits, variant: locks::Variant) -> Result<String> {
    let choices: Vec<u32> = [32, 33, 64, 96, 128, 256]
        .into_iter()
        .filter(|&t| t <= limits.threads)
        .collect();
    let threads = choices[d.range(0, choices.len() as u64 - 1) as usize];
    let blocks = d.range(1, limits.blocks as u64) as u32;
    // The ticket lock hands over one ticket at a time: fewer critical sections keep it short.
    let most = if variant == locks::Variant::Ticket {
        20_000
    } else {
        200_000
    };
    let shape = Shape { blocks, threads };
    let iters = (most / shape.count()).clamp(1, 4) as u32;
    let bounds = MutexBounds {
        timeout: limits.timeout,
        ..MutexBounds::default()
    };
    // A lost update is an `Error::Mismatch` from the call itself.
    let run = locks::run_variant(t, variant, shape, iters, bounds)?;
    Ok(format!("{shape} × {iters}: {} sections", run.expected))
}

fn grid_barrier(t: &Target, d: &mut Draw, limits: Limits) -> Result<String> {
    let cooperative = d.coin() && !t.is_sim();
    let variant = if cooperative {
        barrier::Variant::Cooperative
    } else {
        barrier::Variant::GridBarrier
    };
    // Small grids: other streams' kernels share the GPU, and every block of a grid barrier must
    // be resident at once.
    let blocks = d.range(1, (limits.blocks as u64 / 8).clamp(1, 16)) as u32;
    let opts = BarrierOptions {
        blocks,
        threads: [32, 64, 100, 128][d.range(0, 3) as usize],
        len: d.len(4096).max(1),
        iterations: d.range(1, 40) as u32,
        seed: d.seed(),
        repeats: 0,
        variants: vec![variant],
    };
    // A timeout or a value unlike the CPU's is an error of the call itself (the variant must be
    // correct); checked here again all the same.
    let run = barrier::run_variant(t, &opts, variant)?;
    if let Some(e) = &run.launch_error {
        return Err(mismatch(format!("{}: {e}", run.name)));
    }
    if !run.matches_cpu {
        return Err(mismatch(format!(
            "{} at {blocks}×{}: {} of {} values differ from the CPU's",
            run.name, opts.threads, run.wrong_elements, opts.len
        )));
    }
    Ok(format!(
        "{} {blocks}×{}, W {}, {} iterations",
        run.name, opts.threads, opts.len, opts.iterations
    ))
}

/// A neighbor operation's input: the atoms, the cutoff, the periodic box if any, and whether
/// the kernels run in `f64`.
struct NeighborInput {
    atoms: Atoms,
    cutoff: f64,
    periodic: Option<[f64; 3]>,
    double: bool,
}

fn neighbor_input(d: &mut Draw, limits: Limits) -> Result<NeighborInput> {
    let n = d.len(limits.atoms);
    let dims = if d.coin() { 3 } else { 2 };
    let atoms = generate::random(n, dims, d.seed())?;
    // The generator's points lie below its side in f64, but rounded to f32 one may land on it,
    // which a periodic box of that side refuses (its atoms lie in [0, side) in the kernels'
    // precision): the box is the next f32 above it, holding every point in both precisions.
    let side = ((generate::random_box_side(n.max(1), dims) as f32).next_up()) as f64;
    // The random generator's spacing gives about six neighbors at its cutoff; vary it.
    let cutoff = generate::DEFAULT_CUTOFF * [0.5, 1.0, 1.5][d.range(0, 2) as usize];
    let periodic = (d.coin() && side > 2.0 * cutoff * 1.01).then_some([side; 3]);
    Ok(NeighborInput {
        atoms,
        cutoff,
        periodic,
        double: d.coin(),
    })
}

fn neighbor(t: &Target, d: &mut Draw, limits: Limits) -> Result<String> {
    let NeighborInput {
        atoms,
        cutoff,
        periodic,
        double,
    } = neighbor_input(d, limits)?;
    let (n, dims) = (atoms.len(), atoms.dims());
    let got = if double {
        build::<f64>(t, &atoms, cutoff, periodic)?
    } else {
        build::<f32>(t, &atoms, cutoff, periodic)?
    };
    let want = if double {
        reference(&atoms.coords(), cutoff, periodic)?
    } else {
        let (x, y, z) = atoms.rounded::<f32>();
        let c = Coords {
            x: &x,
            y: &y,
            z: z.as_deref(),
        };
        reference(&c, cutoff, periodic)?
    };
    if let Some(diff) = want.first_difference(&got) {
        return Err(mismatch(format!(
            "the neighbor list of {n} atoms ({dims}-D, {}, cutoff {cutoff}{}): {diff}",
            if double { "f64" } else { "f32" },
            if periodic.is_some() { ", periodic" } else { "" }
        )));
    }
    Ok(format!("{n} atoms, {dims}-D, {} entries", got.pairs()))
}

/// The CPU's list: the brute-force loop where it is quick — it shares nothing with the cells —
/// else the CPU cell list (which the property tests hold to the loop).
fn reference<T: Real + Coord>(
    c: &Coords<'_, T>,
    cutoff: f64,
    periodic: Option<[f64; 3]>,
) -> Result<NeighborList> {
    let cut = Cutoff::<T>::new(cutoff, periodic)?;
    if c.len() <= REFERENCE_ALL_PAIRS_MAX {
        half_pairs(c, &cut)
    } else {
        cell_list(c, &cut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_points_lie_inside_the_periodic_box_in_both_precisions() {
        // An H100 run drew, with this seed, 3301 or more random points whose rounding to f32
        // put one on the box's side: refused by the box — the run's input was wrong, not the
        // code under test.
        let gpu = Limits {
            len: 1 << 22,
            atoms: 50_000,
            blocks: 264,
            threads: 256,
            timeout: Duration::from_secs(10),
        };
        let input = neighbor_input(&mut Draw::new(17107824941283823696), gpu).unwrap();
        let side = input.periodic.expect("the seed draws a periodic box")[0];
        let (x, y, z) = input.atoms.rounded::<f32>();
        for axis in [&x[..], &y[..], z.as_deref().unwrap_or(&[])] {
            assert!(axis.iter().all(|&v| (0.0..side as f32).contains(&v)));
        }
        let a = &input.atoms;
        for axis in [a.x(), a.y(), a.z().unwrap_or(&[])] {
            assert!(axis.iter().all(|&v| (0.0..side).contains(&v)));
        }
    }

    #[test]
    fn draws_cover_the_edges_and_stay_in_range() {
        let mut d = Draw::new(7);
        let lens: Vec<usize> = (0..4000).map(|_| d.len(5000)).collect();
        assert!(lens.iter().all(|&n| n <= 5000));
        for edge in [0, 1, 31, 257, 1025] {
            assert!(lens.contains(&edge), "{edge} never drawn");
        }
        assert!(lens.iter().any(|&n| n > 4099), "no large size drawn");
        assert!((0..100).all(|_| (3..=5).contains(&d.range(3, 5))));
        assert_eq!(Draw::new(1).u64(), Draw::new(1).u64(), "a seed replays");
    }
}
