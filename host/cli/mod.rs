//! The subcommands' printing and glue, one file per topic; `main.rs` holds the argument parser.

pub mod basics;
pub mod output;
