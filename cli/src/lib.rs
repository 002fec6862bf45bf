//! The harness of the `gridsync` command, on the library [`gridsync`]: the benchmarks, the
//! checker's list of every kernel (`gridsync check`), the litmus runner, the stress runner, the
//! demos that plot (the sources' figures), the SVG plots, the option parsers and `gridsync new`.
//!
//! The library computes and returns; this crate measures, plots and reports. The binary
//! (`src/main.rs`, one module per subcommand under `src/commands/`) parses the command line and
//! prints.

#![deny(missing_docs)]

pub mod bench;
pub mod check;
pub mod demos;
pub mod litmus;
pub mod options;
pub mod plot;
pub mod scaffold;
pub mod stress;
