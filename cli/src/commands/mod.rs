//! The subcommands' printing and glue, one file per topic; `main.rs` holds the argument parser.

pub mod atomics;
pub mod barrier;
pub mod basics;
pub mod check;
pub mod cluster;
pub mod count_above;
pub mod doctor;
pub mod dot;
pub mod histogram;
pub mod launch;
pub mod litmus;
pub mod locks;
pub mod mbarrier;
pub mod multi;
pub mod neighbor;
pub mod new;
pub mod output;
pub mod pipeline;
pub mod reduce;
pub mod streams;
pub mod stress;
pub mod table;
pub mod tour;
