//! Output helpers shared by every subcommand: progress on stderr, JSON on stdout.

use gridsync::{Error, Result};
use serde::Serialize;
use std::io::{IsTerminal, Write};

/// A one-line progress indicator on stderr, shown only on a terminal and never in JSON mode.
pub fn progress(enabled: bool, label: &'static str) -> impl FnMut(u32, u32) {
    let show = enabled && std::io::stderr().is_terminal();
    move |done, total| {
        if show {
            eprint!("\r{label}: {done}/{total}");
            if done == total {
                eprint!("\r\x1b[K");
            }
            let _ = std::io::stderr().flush();
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

/// The roofline line every bandwidth benchmark prints above its table.
pub fn print_copy_roofline(copy: &gridsync::bench::copy::CopyBench) {
    println!(
        "  copy roofline: {} MiB device-to-device in {:.3} ms = {:.0} GB/s (read + written)",
        copy.bytes >> 20,
        copy.ms.median,
        copy.gb_per_s
    );
}
