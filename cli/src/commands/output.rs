//! What the subcommands share: progress on stderr; JSON or text on stdout; the sized
//! benchmarks' flags and the bandwidth tables of every benchmark against the copy roofline.

use clap::Args;
use gridsync::runtime::copy::{self, CopyBench};
use gridsync::{Error, Result};
use gridsync_cli::bench::{KernelTiming, SizedBench, SizedBenchOptions};
use serde::Serialize;
use std::io::IsTerminal;

/// The exit status of a run that worked but whose check failed: a result that does not match
/// the CPU's, a forbidden litmus outcome, an endurance run's failure, a doctor's required piece
/// missing. (0: success; 1: an error — the run could not be made; 2: a usage error; 3: a litmus
/// run too short to judge.)
pub const EXIT_CHECK_FAILED: i32 = 4;

/// The seed of every command's random inputs where none is given: fixed, so that two runs
/// of one command line see the same inputs, and printed with the report.
pub const DEFAULT_SEED: u64 = 1;

/// A progress bar on stderr (`label [####    ] done/total elapsed<eta`), shown only on a
/// terminal and never in JSON mode (`enabled` false), gone once the work is done: the
/// callback of every long library call, `(steps done, steps)`.
pub fn progress(enabled: bool, label: &'static str) -> impl FnMut(u32, u32) {
    let mut bar = Bar::new(
        enabled,
        label,
        "{prefix} [{bar:40}] {pos}/{len} {elapsed}<{eta}",
    );
    move |done, total| bar.set(u64::from(done), u64::from(total), None)
}

/// A progress bar on stderr for work of a known length that also says what it is at (a
/// litmus combination, the endurance run's counts): shown only on a terminal, never in JSON.
pub struct Bar(Option<indicatif::ProgressBar>);

impl Bar {
    /// A bar labelled `label` drawn by indicatif's `template`, or nothing where `enabled` is
    /// false or stderr is not a terminal.
    pub fn new(enabled: bool, label: &'static str, template: &str) -> Bar {
        if !enabled || !std::io::stderr().is_terminal() {
            return Bar(None);
        }
        let style = indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("## ");
        let bar =
            indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr())
                .with_style(style)
                .with_prefix(label);
        Bar(Some(bar))
    }

    /// `done` of `total`, with `message` where the template shows one; cleared at the end.
    pub fn set(&mut self, done: u64, total: u64, message: Option<String>) {
        let Some(bar) = &self.0 else { return };
        bar.set_length(total);
        bar.set_position(done.min(total));
        if let Some(m) = message {
            bar.set_message(m);
        }
        if done >= total {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

/// A clap value parser for any of the library's labelled options (`FromStr` with
/// `gridsync::Error`), its error message shown as clap's.
pub fn parse_option<T: std::str::FromStr<Err = Error>>(s: &str) -> std::result::Result<T, String> {
    s.parse().map_err(|e: Error| e.to_string())
}

pub fn print_json(value: &impl Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::InvalidInput(format!("JSON: {e}")))?;
    println!("{text}");
    Ok(())
}

/// `value` as JSON if `json`, else as `print` writes it: how every subcommand ends.
///
/// # Errors
/// A JSON error.
pub fn print_json_or<T: Serialize>(json: bool, value: &T, print: impl FnOnce(&T)) -> Result<()> {
    if json {
        return print_json(value);
    }
    print(value);
    Ok(())
}

/// A report's last line on timing: how its ms were measured (`how`), or, when nothing was
/// timed (the simulator), that there are no timings.
pub fn print_timing_note(timed: bool, how: &str) {
    if timed {
        println!("  ms: {how}");
    } else {
        println!("  No timings: the simulator's speed says nothing about a GPU's.");
    }
}

/// The roofline line every bandwidth benchmark prints above its table.
pub fn print_copy_roofline(copy: &CopyBench) {
    println!(
        "  copy roofline: {} MiB device-to-device in {:.3} ms = {:.0} GB/s (read + written)",
        copy.bytes >> 20,
        copy.ms.median,
        copy.gb_per_s
    );
}

/// `--repeats N` (alias `--trials`): the timed runs of each measurement, whose median is
/// reported — one flag, one meaning on every benchmark that flattens it. A struct per default
/// (clap keeps a default's text once per generic struct, so a const parameter would give every
/// benchmark the first one's).
macro_rules! repeats_flag {
    ($name:ident, $default:literal, $why:literal) => {
        #[doc = concat!("`--repeats N`, default ", $default, ": ", $why)]
        #[derive(Args, Clone, Copy, Debug)]
        pub struct $name {
            /// Timed runs of each measurement, after the warm-ups; the median is reported.
            #[arg(long = "repeats", value_name = "N", visible_alias = "trials", default_value_t = $default)]
            pub trials: u32,
        }
    };
}

repeats_flag!(Repeats, 20, "most benchmarks.");
repeats_flag!(Repeats10, 10, "long cells (locks, scopes, several GPUs).");
repeats_flag!(Repeats50, 50, "the launch benchmark's microseconds.");

/// The flags of a sized benchmark (`bench count-above`, `bench dot`, `bench reduce`). Each
/// topic's `BenchArgs` flattens them and words `--len` (its sizes, its default) and, where only
/// some kernels take it, `--blocks-per-sm` for its kernels.
#[derive(Args)]
pub struct SizedBenchArgs {
    /// Sizes in elements, comma-separated [default: the benchmark's].
    #[arg(long, value_name = "N,...", value_delimiter = ',')]
    len: Vec<usize>,
    /// Timed launches per kernel and size (after 3 warm-ups).
    #[arg(long = "repeats", value_name = "N", visible_alias = "trials", default_value_t = gridsync_cli::bench::sized::DEFAULT_TRIALS)]
    trials: u32,
    /// Blocks per SM [default: as many as fit, from the occupancy calculator].
    #[arg(long, value_name = "B")]
    blocks_per_sm: Option<u32>,
    /// Bytes of the device-to-device copy measured as the roofline.
    #[arg(long, default_value_t = copy::DEFAULT_BYTES)]
    copy_bytes: usize,
}

impl SizedBenchArgs {
    /// What the flags ask for; `default_lens` if `--len` named no size.
    pub fn options(&self, default_lens: &[usize]) -> SizedBenchOptions {
        let lens = if self.len.is_empty() {
            default_lens
        } else {
            &self.len
        };
        SizedBenchOptions {
            trials: self.trials,
            blocks_per_sm: self.blocks_per_sm,
            copy_bytes: self.copy_bytes,
            ..SizedBenchOptions::new(lens)
        }
    }
}

/// The size a demo runs at: `asked` (the value of `flag`), else its default — `sim` on the
/// simulator, `gpu` on a GPU — checked to fit the host's and the device's memory at `each`
/// per element.
///
/// # Errors
/// [`Error::InvalidInput`] naming `flag` where it does not fit.
pub fn demo_size(
    target: &gridsync::Target,
    flag: &str,
    asked: Option<usize>,
    (sim, gpu): (usize, usize),
    each: gridsync::runtime::memory::Footprint,
) -> Result<usize> {
    let n = asked.unwrap_or(if target.is_sim() { sim } else { gpu });
    gridsync::runtime::memory::check_elements(target, flag, n, each)?;
    Ok(n)
}

/// A sized benchmark's command (`bench count-above`, `bench dot`, `bench reduce`): the sizes
/// of `args` (else `default_lens`) run by `run` under a progress bar named `label`, printed by
/// `print` or as JSON.
///
/// # Errors
/// What `run` returns; a JSON error.
pub fn sized_bench_command<B: Serialize>(
    json: bool,
    label: &'static str,
    (args, default_lens): (&SizedBenchArgs, &[usize]),
    run: impl FnOnce(&SizedBenchOptions, &mut dyn FnMut(u32, u32)) -> Result<B>,
    print: impl FnOnce(&B),
) -> Result<()> {
    let b = run(&args.options(default_lens), &mut progress(!json, label))?;
    print_json_or(json, &b, print)
}

/// A column a topic adds right of a bandwidth table's "of copy".
pub struct Column {
    /// Its header.
    pub header: &'static str,
    /// Its width; cells are right-aligned in it.
    pub width: usize,
}

/// How a topic's bandwidth tables look: the widths of the kernel and grid columns (wide enough
/// for its names and launch shapes) and the columns it adds.
pub struct TableLayout {
    /// Width of the kernel column.
    pub kernel: usize,
    /// Width of the grid column.
    pub grid: usize,
    /// The topic's columns, after the shared ones.
    pub extra: &'static [Column],
}

/// The bandwidth table of one input under `heading`, or why the input was skipped: a row per
/// kernel of its name, grid, median/min/max ms, GB/s and fraction of the copy roofline, then
/// the topic's `cells` under `layout.extra`.
pub fn print_kernel_table<'a>(
    heading: &str,
    skipped: Option<&str>,
    layout: &TableLayout,
    rows: impl IntoIterator<Item = (&'a KernelTiming, Vec<String>)>,
) {
    println!();
    println!("  {heading}");
    if let Some(why) = skipped {
        println!("    skipped: {why}");
        return;
    }
    let (kernel, grid) = (layout.kernel, layout.grid);
    let mut header = format!(
        "    {:<kernel$} {:>grid$} {:>10} {:>10} {:>10} {:>8} {:>8}",
        "kernel", "grid", "median ms", "min ms", "max ms", "GB/s", "of copy"
    );
    for c in layout.extra {
        header += &format!(" {:>w$}", c.header, w = c.width);
    }
    println!("{header}");
    for (k, cells) in rows {
        let mut line = format!(
            "    {:<kernel$} {:>grid$} {:>10.4} {:>10.4} {:>10.4} {:>8.0} {:>7.1}%",
            k.name,
            format!("{}×{}", k.blocks, k.threads_per_block),
            k.ms.median,
            k.ms.min,
            k.ms.max,
            k.gb_per_s,
            100.0 * k.fraction_of_copy
        );
        for (c, cell) in layout.extra.iter().zip(cells) {
            line += &format!(" {cell:>w$}", w = c.width);
        }
        println!("{line}");
    }
}

/// A sized benchmark's report under its `title`: the roofline, one table per size headed
/// "n = … (… bytes read per `per`)", and the definition; `row` gives a kernel's timing and the
/// topic's cells.
pub fn print_sized_bench<K>(
    title: &str,
    b: &SizedBench<K>,
    per: &str,
    layout: &TableLayout,
    row: impl Fn(&K) -> (&KernelTiming, Vec<String>),
) {
    println!("{title}");
    print_copy_roofline(&b.copy);
    for s in &b.sizes {
        let heading = format!("n = {} ({} bytes read per {per})", s.len, s.bytes_read);
        print_kernel_table(
            &heading,
            s.skipped.as_deref(),
            layout,
            s.kernels.iter().map(&row),
        );
    }
    println!();
    println!("  {}", b.definition);
}
