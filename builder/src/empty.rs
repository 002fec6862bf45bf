//! Architectures that get none of the device crate's kernels: every kernel is behind a `cfg`
//! that leaves it out of that architecture's build (`#[cfg(target_feature = "sm_90")]` on a
//! crate of Hopper kernels, built for the default `sm_70` too).
//!
//! Such a build ends one of two ways. Where something of the crate still refers to
//! `gridsync-gpu` (a `use` outside the `cfg`), the compiler makes a module without a kernel.
//! Where nothing does, nothing refers to the dependency that holds the `#[panic_handler]`
//! either, the compiler leaves it out, and the build stops: "`#[panic_handler]` function
//! required, but not found". The builder tells that second case by its shape, not its text:
//! the compiler stopped with no error pointing into the source, and the crate's own code,
//! built alone for that architecture (an `rlib`, which needs no panic handler), has no
//! `.entry`. Only then — never for a crate that has kernels there — does it write a module of
//! its own, the header that build gave (`.version`, `.target`, `.address_size`) and nothing
//! else; [`EmptyArch`] says whether that is a warning or an error.

use crate::Error;

/// What [`PtxBuilder::build`](crate::PtxBuilder::build) does with an architecture that gets
/// none of the device crate's kernels (every one behind a `cfg` that leaves it out of that
/// build), set with [`PtxBuilder::empty_arches`](crate::PtxBuilder::empty_arches). Either way,
/// a build in which no architecture has a kernel is an error: there is nothing to launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EmptyArch {
    /// The default: write the architecture's module without kernels, and say so in a cargo
    /// warning that names the architecture and the `PtxBuilder::arches` call that would leave
    /// it out. A GPU whose newest runnable build is that one loads it, and a launch there of a
    /// kernel that a newer build has is refused with gridsync's `Error::Unsupported`, naming
    /// the architecture the kernel needs and the GPU's compute capability.
    #[default]
    Warn,
    /// Stop with an error that names the architectures without kernels and the
    /// `PtxBuilder::arches` call that lists only those with them.
    Error,
}

/// The kernels (`.entry` points) of a PTX module, in order.
pub(crate) fn entries(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let rest = l
                .strip_prefix(".visible .entry ")
                .or_else(|| l.strip_prefix(".entry "))?;
            rest.split(['(', ' ']).next().filter(|n| !n.is_empty())
        })
        .map(str::to_string)
        .collect()
}

/// A module without kernels for `arch`: a comment saying why, then the header of `own_code`
/// (the device crate's own code built for `arch`, which carries the PTX ISA and target the
/// compiler chose, the caller's `+ptxNN` included). `None` if `own_code` has a kernel, or no
/// such header.
pub(crate) fn module_without_kernels(own_code: &str, name: &str, arch: &str) -> Option<String> {
    if !entries(own_code).is_empty() {
        return None;
    }
    let directive = |d: &str| {
        own_code.lines().map(str::trim).find(|l| {
            l.strip_prefix(d)
                .is_some_and(|v| v.starts_with([' ', '\t']))
        })
    };
    let (version, target) = (directive(".version")?, directive(".target")?);
    let address_size = directive(".address_size").unwrap_or(".address_size 64");
    Some(format!(
        "//\n// {name}_{arch}.ptx, written by gridsync-builder: the device crate has no kernels \
         for {arch}\n// (each is behind a `cfg` that leaves it out of this architecture's build). \
         A module\n// without kernels: it loads, and the host refuses a kernel that only a newer \
         build has.\n//\n\n{version}\n{target}\n{address_size}\n"
    ))
}

/// `&["sm_80", "sm_90"]`, as a call of `PtxBuilder::arches` would take it.
fn arches_literal(arches: &[&str]) -> String {
    let quoted: Vec<String> = arches.iter().map(|a| format!("{a:?}")).collect();
    format!("&[{}]", quoted.join(", "))
}

/// The cargo warning (one line) for the architectures in `empty`: which files hold no
/// kernels, what a GPU that loads one gets, and how to leave them out or make this an error.
pub(crate) fn warning(name: &str, empty: &[&str], with_kernels: &[&str]) -> String {
    let files: Vec<String> = empty.iter().map(|a| format!("{name}_{a}.ptx")).collect();
    format!(
        "no kernels for {}: every kernel of the device crate `{name}` is behind a `cfg` that \
         leaves it out of those builds. The modules written for them without kernels ({}) \
         load, and a launch there of a kernel of the builds for {} is refused with \
         Error::Unsupported. To build only those, call PtxBuilder::arches({}); to make this an \
         error, PtxBuilder::empty_arches(EmptyArch::Error)",
        empty.join(", "),
        files.join(", "),
        with_kernels.join(", "),
        arches_literal(with_kernels)
    )
}

/// The error of [`EmptyArch::Error`]: the architectures without kernels, those with them, and
/// the call that lists only those.
pub(crate) fn refusal(name: &str, empty: &[&str], with_kernels: &[&str]) -> Error {
    let empty = empty.join(", ");
    Error(format!(
        "the device crate `{name}` has no kernels for {empty}: each is behind a `cfg` that leaves \
         it out of those builds (`#[cfg(target_feature = \"sm_90\")]`, say). Its kernels are \
         in the builds for {}.\n\nBuild only those: PtxBuilder::arches({}) — a GPU older than \
         all of them is then refused by Module::load (Error::Unsupported).\nOr keep {empty} as \
         modules without kernels: PtxBuilder::empty_arches(EmptyArch::Warn).",
        with_kernels.join(", "),
        arches_literal(with_kernels)
    ))
}

/// The error when no architecture has a kernel, with the compiler's output where a build
/// stopped (`first_failure`).
pub(crate) fn no_kernels_anywhere(
    name: &str,
    arches: &[&str],
    first_failure: Option<&Error>,
) -> Error {
    let mut text = format!(
        "the device crate `{name}` has no kernels for any architecture built ({}). A kernel \
         behind `#[cfg(target_feature = \"sm_90\")]` is in the sm_90 build only: list the \
         architectures its `cfg` keeps, PtxBuilder::arches(&[\"sm_90\"]) for that one.",
        arches.join(", ")
    );
    if let Some(e) = first_failure {
        text.push_str(&format!(
            " Where nothing of the crate is left, nothing refers to gridsync-gpu either, and \
             the compiler misses the `#[panic_handler]` that crate provides:\n\n{e}"
        ));
    }
    Error(text)
}
