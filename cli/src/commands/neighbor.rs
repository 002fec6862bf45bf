//! `gridsync neighbor` and `gridsync bench neighbor`.

use super::output::{Repeats, print_json_or, print_timing_note, progress};
use super::table::{Table, fmt_opt, percent, sci};
use clap::{Args, ValueEnum};
use gridsync::neighbor::demo::{ALL_PAIRS_MAX_ATOMS, DEFAULT_MAX_NEIGHBORS};
use gridsync::neighbor::generate::{self, DEFAULT_CUTOFF};
use gridsync::neighbor::{Atoms, NeighborList, NeighborOptions, NeighborReport, xy};
use gridsync::{Result, Target};
use gridsync_cli::bench::neighbor as bench;
use gridsync_cli::plot::{BondsPlot, bonds_chart, check_svg_path, window_for, write_svg};
use std::path::PathBuf;

/// Atoms of the book's sheet: the default on a GPU.
pub const BOOK_ATOMS: usize = 22_464;
/// The default on the simulator: every kernel, the O(N²) ones included, in seconds.
pub const SIM_ATOMS: usize = 1_000;
/// Slots per atom for random points by default: their counts spread far above the mean of 6.
pub const RANDOM_MAX_NEIGHBORS: usize = 32;
/// Atoms a plot shows at most (a window around the centre for more): bonds stay visible.
pub const PLOT_ATOMS: usize = 25_000;

/// The generators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Generator {
    /// A polycrystalline graphene sheet (the book's kind of input).
    Graphene,
    /// A perfect honeycomb: every inner atom has 3 neighbors.
    Honeycomb,
    /// Uniform random points in a square, about 6 neighbors each.
    Random,
    /// Uniform random points in a cube, about 6 neighbors each.
    Random3,
}

#[derive(Args)]
pub struct NeighborArgs {
    /// Read the atoms from FILE, the book's xy.txt: `x y` (or `x y z`) per line, blank lines
    /// and `#` comments ignored, an optional first line holding only the atom count.
    #[arg(long, value_name = "FILE", conflicts_with = "generate")]
    input: Option<PathBuf>,
    /// Generate the atoms [default: graphene].
    #[arg(long, value_enum)]
    generate: Option<Generator>,
    /// Atoms to generate [default: 22464, the book's sheet; 1000 on the simulator].
    #[arg(long = "len", visible_alias = "atoms", value_name = "N")]
    atoms: Option<usize>,
    /// Seed of the generators.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Neighbors are closer than this (strictly), in the atoms' units (Å for graphene).
    #[arg(long, default_value_t = DEFAULT_CUTOFF)]
    cutoff: f64,
    /// Slots per atom of the padded lists (the book's MN); an atom with more is an error that
    /// names it [default: 10, the book's; 32 for the random generators].
    #[arg(long, value_name = "MN")]
    max_neighbors: Option<usize>,
    /// Run the kernels in f64 (the book's USE_DP) instead of f32.
    #[arg(long)]
    double: bool,
    /// A periodic box X,Y (2-D) or X,Y,Z (3-D) with its corner at the origin: distances by the
    /// minimum image. Every atom must lie inside; the random generators' box side is printed
    /// with the input.
    #[arg(long, value_name = "X,Y[,Z]", value_parser = gridsync_cli::options::parse_sides)]
    periodic: Option<[f64; 3]>,
    /// Run the O(N²) kernels up to this many atoms (N² steps: 10⁶ atoms take about a second).
    #[arg(long, value_name = "N", default_value_t = ALL_PAIRS_MAX_ATOMS)]
    all_pairs_max_atoms: usize,
    /// Write the neighbor lists in the book's neighbor.txt format: per atom the count, then MN
    /// slots with the indices and NaN.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Draw the atoms and their bonds as SVG, atoms coloured by neighbor count (a window of
    /// about 25000 atoms around the centre for larger inputs).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// The window the plot shows, X0,Y0,X1,Y1.
    #[arg(long, value_name = "X0,Y0,X1,Y1", value_parser = gridsync_cli::options::parse_window, requires = "plot")]
    plot_window: Option<[f64; 4]>,
    /// Write the atoms (read or generated) to FILE in the xy.txt format.
    #[arg(long, value_name = "FILE")]
    write_xy: Option<PathBuf>,
}

/// The atoms the arguments name, and how to describe them.
pub fn atoms_for(
    target: &Target,
    input: &Option<PathBuf>,
    generator: Option<Generator>,
    atoms: Option<usize>,
    seed: u64,
) -> Result<(Atoms, String)> {
    if let Some(path) = input {
        return Ok((xy::read_xy(path)?, path.display().to_string()));
    }
    let n = atoms.unwrap_or(if target.is_sim() {
        SIM_ATOMS
    } else {
        BOOK_ATOMS
    });
    let g = generator.unwrap_or(Generator::Graphene);
    let atoms = match g {
        Generator::Graphene => gridsync::neighbor::graphene::graphene(n, seed)?,
        Generator::Honeycomb => generate::honeycomb(n)?,
        Generator::Random => generate::random(n, 2, seed)?,
        Generator::Random3 => generate::random(n, 3, seed)?,
    };
    let what = match g {
        Generator::Graphene => {
            format!("a polycrystalline graphene sheet of {n} atoms (seed {seed})")
        }
        Generator::Honeycomb => format!("a honeycomb of {n} atoms"),
        Generator::Random => format!(
            "{n} random points in a square of side {:.3} (seed {seed})",
            generate::random_box_side(n, 2)
        ),
        Generator::Random3 => format!(
            "{n} random points in a cube of side {:.3} (seed {seed})",
            generate::random_box_side(n, 3)
        ),
    };
    Ok((atoms, what))
}

pub fn command(target: &Target, args: &NeighborArgs, json: bool) -> Result<()> {
    if let Some(p) = &args.plot {
        check_svg_path(p)?;
    }
    let (atoms, input) = atoms_for(target, &args.input, args.generate, args.atoms, args.seed)?;
    if let Some(path) = &args.write_xy {
        xy::write_xy(path, &atoms)?;
    }
    // Random points have a Poisson spread of neighbors: 10 slots overflow on large inputs.
    let random = matches!(args.generate, Some(Generator::Random | Generator::Random3));
    let max_neighbors = args.max_neighbors.unwrap_or(if random {
        RANDOM_MAX_NEIGHBORS
    } else {
        DEFAULT_MAX_NEIGHBORS
    });
    let opts = NeighborOptions {
        cutoff: args.cutoff,
        max_neighbors,
        double: args.double,
        periodic: args.periodic,
        all_pairs_max_atoms: args.all_pairs_max_atoms,
    };
    let mut bar = progress(!json, "neighbor");
    let (report, list) = gridsync::neighbor::run(target, &atoms, &input, &opts, &mut bar)?;
    if let Some(path) = &args.output {
        list.write_book_file(path, max_neighbors)?;
    }
    if let Some(path) = &args.plot {
        plot(path, &atoms, &list, args.plot_window, &report)?;
    }
    print_json_or(json, &report, print_report)
}

fn plot(
    path: &std::path::Path,
    atoms: &Atoms,
    list: &NeighborList,
    window: Option<[f64; 4]>,
    r: &NeighborReport,
) -> Result<()> {
    let window = window.unwrap_or_else(|| window_for(atoms.x(), atoms.y(), PLOT_ATOMS));
    let shown = if atoms.len() > PLOT_ATOMS {
        " (the window around the centre)"
    } else {
        ""
    };
    let svg = bonds_chart(&BondsPlot {
        title: format!(
            "{}: {} bonds below {} Å{shown}",
            r.input,
            r.entries / 2,
            r.cutoff
        ),
        x: atoms.x(),
        y: atoms.y(),
        list,
        window,
    });
    write_svg(path, &svg)
}

pub fn print_report(r: &NeighborReport) {
    println!("neighbor lists on the {}", r.target);
    println!(
        "  atoms: {} ({}-D, {} atoms), cutoff {} (strictly below), {}",
        r.input, r.dims, r.atoms, r.cutoff, r.precision
    );
    println!(
        "  CPU reference ({}): {} neighbor entries ({} pairs) in {:.1} ms",
        r.reference,
        r.entries,
        r.entries / 2,
        r.reference_ms
    );
    let hist: Vec<String> = r
        .histogram
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c > 0)
        .map(|(k, c)| format!("{k}: {c}"))
        .collect();
    println!("  atoms by neighbor count: {}", hist.join(", "));
    println!();
    let t = Table::new("  {kernel:<34} {method:<7} {layout:<11} {ms:>10} {atoms/s:>12}  {result}");
    t.header();
    for k in &r.runs {
        let rate = k.atoms_per_s.map_or_else(|| "—".into(), |v| sci(v, 3));
        let result = if k.equal {
            "equal"
        } else {
            "CORRUPTED (expected: the mistake)"
        };
        t.row(&[
            &k.name,
            &k.method,
            &k.layout,
            &fmt_opt(k.ms, 3),
            &rate,
            &result,
        ]);
    }
    if let Some(c) = &r.mistake {
        println!();
        if c.atoms == 0 {
            println!(
                "  The mistake (slot read before the atomicAdd) happened to corrupt nothing this run: two threads must append to one atom at the same moment."
            );
        } else {
            println!(
                "  The mistake corrupted {} atoms' lists: {} neighbors lost (two threads wrote one slot), {} counted slots never written.",
                c.atoms, c.lost, c.unwritten
            );
        }
        if let Some(e) = &c.example {
            println!("    e.g. {e}");
        }
    }
    for s in &r.skipped {
        println!("  skipped {s}");
    }
    println!();
    println!("  Every list but the mistake's equals the CPU reference's, atom by atom.");
    let timed = r.runs.iter().any(|k| k.ms.is_some());
    print_timing_note(
        timed,
        "one event-timed run after a warm-up; the cell list from binning to the last neighbor written.",
    );
}

/// `bench neighbor`.
#[derive(Args)]
pub struct BenchArgs {
    /// Graphene atoms of the cell-list sizes, comma-separated.
    #[arg(long = "len", value_name = "N,...", visible_alias = "atoms", value_delimiter = ',', default_values_t = bench::DEFAULT_CELL_ATOMS)]
    atoms: Vec<usize>,
    /// Graphene atoms of the O(N²) sizes, comma-separated (empty: none).
    #[arg(long = "all-pairs-len", value_name = "N,...", visible_alias = "all-pairs-atoms", value_delimiter = ',', default_values_t = bench::DEFAULT_ALL_PAIRS_ATOMS)]
    all_pairs_atoms: Vec<usize>,
    #[command(flatten)]
    repeats: Repeats,
    /// f64 kernels.
    #[arg(long)]
    double: bool,
    /// Slots per atom of the padded lists.
    #[arg(long, value_name = "MN", default_value_t = DEFAULT_MAX_NEIGHBORS)]
    max_neighbors: usize,
    /// Bytes of the roofline copy.
    #[arg(long, default_value_t = gridsync::runtime::copy::DEFAULT_BYTES)]
    copy_bytes: usize,
}

pub fn bench_command(target: &Target, args: &BenchArgs, json: bool) -> Result<()> {
    let opts = bench::NeighborBenchOptions {
        cell_atoms: args.atoms.clone(),
        all_pairs_atoms: args.all_pairs_atoms.clone(),
        trials: args.repeats.trials,
        double: args.double,
        max_neighbors: args.max_neighbors,
        copy_bytes: args.copy_bytes,
    };
    let b = bench::run(target, &opts, progress(!json, "bench neighbor"))?;
    print_json_or(json, &b, print_bench)
}

pub fn print_bench(b: &bench::NeighborBench) {
    println!(
        "neighbor-list benchmark on the {} ({}, graphene, cutoff {}; medians; copy roofline {:.0} GB/s)",
        b.device, b.precision, DEFAULT_CUTOFF, b.copy.gb_per_s
    );
    println!();
    println!(
        "  cell list, CSR, whole build (binning to the last neighbor written), and its phases in ms:"
    );
    let t = Table::new(
        "  {atoms:>10} {entries:>10} {CSR ms:>9.4} {atoms/s:>12} {bin:>7.4} {scan:>7.4} \
         {scatter:>7.4} {count:>7.4} {fill:>7.4} {fill/s:>7.4} {padded:>9.4} {transp.:>9.4} \
         {copy %:>7}",
    );
    t.header();
    for r in &b.cells {
        let p = &r.phases;
        t.row(&[
            &r.atoms,
            &r.entries,
            &r.csr_ms.median,
            &sci(r.atoms_per_s, 3),
            &p.bin.median,
            &p.scan_cells.median,
            &p.scatter.median,
            &p.count.median,
            &p.fill.median,
            &p.fill_sorted.median,
            &r.padded_ms.median,
            &r.transposed_ms.median,
            &percent(r.fraction_of_copy, 1),
        ]);
    }
    if !b.all_pairs.is_empty() {
        println!();
        println!("  the book's O(N²) kernels:");
        let t =
            Table::new("  {kernel:<32} {atoms:>10} {ms:>10.3} {atoms/s:>12} {pair checks/s:>14}");
        t.header();
        for r in &b.all_pairs {
            let rates = [r.atoms_per_s, r.checks_per_s].map(|x| sci(x, 3));
            t.row(&[&r.kernel, &r.atoms, &r.ms.median, &rates[0], &rates[1]]);
        }
    }
    println!();
    println!(
        "  copy %: the bytes every phase must read or write once (bench::neighbor::compulsory_bytes) per CSR time, against the copy."
    );
    println!(
        "  padded / transp.: the one-pass search into MN slots per atom, per-atom and transposed layouts (bin, scan and scatter included)."
    );
}
