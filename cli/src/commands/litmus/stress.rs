//! `gridsync litmus`'s stressing parameters: a preset, and an option for each parameter that
//! overrides it.

use crate::commands::output::parse_option;
use clap::Args;
use gridsync::{Error, Result};
use gridsync_cli::litmus::{SmOrder, Stress, StressPattern};

/// The stressing parameters of the litmus kernel (GPU; and the kernel on the simulator).
#[derive(Args)]
pub struct StressArgs {
    /// The stressing parameters to start from: default, or legacy (the kernel's before the
    /// order of the SMs could be chosen: SMs of consecutive ids); each option below overrides
    /// one of them [default: default].
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
    /// Which SMs form an instance at the placement sms: adjacent (consecutive ids), spread (ids
    /// far apart), shuffled (a random permutation every launch) [default: spread].
    #[arg(long = "sm-order", value_name = "ORDER", value_parser = parse_option::<SmOrder>)]
    sm_order: Option<SmOrder>,
    /// Accesses each stress thread makes per round (0: no stress) [default: 64].
    #[arg(long = "stress-iters", value_name = "N")]
    pub iters: Option<u32>,
    /// Lines of 128 bytes the stress threads hammer (a power of two) [default: 2].
    #[arg(long = "stress-lines", value_name = "N")]
    pub lines: Option<u32>,
    /// How each stress access pairs its two accesses: store-store, store-load, load-store,
    /// load-load [default: load-store].
    #[arg(long = "stress-pattern", value_name = "PATTERN", value_parser = parse_option::<StressPattern>)]
    pattern: Option<StressPattern>,
    /// Stress accesses each tester makes itself just before its test, every round
    /// [default: 0].
    #[arg(long = "pre-stress", value_name = "N")]
    pre_iters: Option<u32>,
    /// Words between two location slots (32: one 128-byte line each) [default: 64].
    #[arg(long, value_name = "WORDS")]
    stride: Option<u32>,
    /// Blocks of each SM that only stress, or auto (a quarter) [default: 1].
    #[arg(long = "stress-blocks", value_name = "N|auto", value_parser = parse_blocks)]
    stress_blocks: Option<Blocks>,
    /// Whether an instance's threads meet at a spin-up barrier before their accesses: on, off
    /// [default: on].
    #[arg(long = "spin-up", value_name = "on|off", value_parser = parse_on_off)]
    spin_up: Option<bool>,
}

/// `--stress-blocks`: a number, or `None` for auto.
#[derive(Clone, Copy)]
struct Blocks(Option<u32>);

fn parse_blocks(s: &str) -> std::result::Result<Blocks, String> {
    if s == "auto" {
        return Ok(Blocks(None));
    }
    s.parse()
        .map(|n| Blocks(Some(n)))
        .map_err(|_| format!("a number of blocks per SM, or auto, not {s:?}"))
}

fn parse_on_off(s: &str) -> std::result::Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("on or off, not {s:?}")),
    }
}

impl StressArgs {
    /// The preset, with every option given in its place.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for an unknown preset or a value the kernel cannot use.
    pub fn stress(&self) -> Result<Stress> {
        let base = match &self.preset {
            Some(name) => Stress::preset(name)?,
            None => Stress::DEFAULT,
        };
        let s = Stress {
            iters: self.iters.unwrap_or(base.iters),
            lines: self.lines.unwrap_or(base.lines),
            pattern: self.pattern.unwrap_or(base.pattern),
            pre_iters: self.pre_iters.unwrap_or(base.pre_iters),
            stride_words: self.stride.unwrap_or(base.stride_words),
            stress_blocks: self.stress_blocks.map_or(base.stress_blocks, |b| b.0),
            sm_order: self.sm_order.unwrap_or(base.sm_order),
            spin_up: self.spin_up.unwrap_or(base.spin_up),
        };
        s.check()?;
        Ok(s)
    }

    /// Whether any parameter was given (a preset or an option).
    pub fn any(&self) -> bool {
        self.iters.is_some() || self.lines.is_some() || self.beyond_iters_and_lines()
    }

    /// Whether a parameter other than the stress's iterations and lines was given: the locks'
    /// and barriers' stress (`--primitives`) has only those two.
    pub fn beyond_iters_and_lines(&self) -> bool {
        self.preset.is_some()
            || self.sm_order.is_some()
            || self.pattern.is_some()
            || self.pre_iters.is_some()
            || self.stride.is_some()
            || self.stress_blocks.is_some()
            || self.spin_up.is_some()
    }
}

/// Refuses stressing parameters given to the simulator's programs, which have none.
///
/// # Errors
/// [`Error::InvalidInput`].
pub fn refuse_for_programs(args: &StressArgs) -> Result<()> {
    if args.any() {
        return Err(Error::InvalidInput(
            "the stressing parameters (--preset, --sm-order, --stress-*, --pre-stress, --stride, \
             --spin-up) are the GPU kernel's: the simulator's litmus programs have none (--tune \
             runs the kernel on the simulator)"
                .into(),
        ));
    }
    Ok(())
}
