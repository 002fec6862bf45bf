//! `gridsync new PATH`: a ready project of your own kernels on gridsync's primitives, like
//! `cargo new` — the host program, the `kernels/` device crate, the build script that builds it
//! to PTX, the pinned toolchain, and what a machine without CUDA needs — whose
//! `cargo run -- --simulate` works at once.
//!
//! The project is the repository's `examples/own-kernel`, file for file (the kernels, the host
//! program and the build script are that example's files; a test checks that the rest matches
//! what [`NewProject::files`] writes), with its dependencies on gridsync taken from the
//! registry, a git repository or a local checkout ([`Source`]). By default
//! ([`Source::default_for`]) they come from the checkout this gridsync was built from, while it
//! is still there: gridsync is not on crates.io yet, so a project that took it from there could
//! not build.
//!
//! ```no_run
//! # fn main() -> gridsync::Result<()> {
//! use gridsync_cli::scaffold::{NewProject, Source};
//! let project = NewProject::new("my-kernels", Source::registry())?;
//! for path in project.write()? {
//!     println!("wrote {}", path.display());
//! }
//! # Ok(()) }
//! ```

use gridsync::runtime::error::{Error, Result};
use std::path::{Component, Path, PathBuf};

/// The directory of the command's package this binary was built from: `cli/` in a gridsync
/// checkout (the checkout is [`built_from`]), or a registry's copy of the package.
pub const BUILT_FROM: &str = env!("CARGO_MANIFEST_DIR");

/// The gridsync checkout this binary was built from, if it was: the parent of [`BUILT_FROM`]
/// (the command's crate is `cli/` of the checkout).
pub fn built_from() -> &'static Path {
    let here = Path::new(BUILT_FROM);
    here.parent().unwrap_or(here)
}

/// The host program (`src/main.rs`): `examples/own-kernel/src/main.rs`.
const MAIN_RS: &str = include_str!("template/main.rs");
/// The device crate (`kernels/src/lib.rs`): `examples/own-kernel/kernels/src/lib.rs`.
const KERNELS_RS: &str = include_str!("template/kernels.rs");
/// The build script (`build.rs`): `examples/own-kernel/build.rs`.
const BUILD_RS: &str = include_str!("template/build.rs");
/// The pinned nightly: gridsync's own `rust-toolchain.toml`.
const TOOLCHAIN: &str = include_str!("template/rust-toolchain.toml");

/// Where the new project takes gridsync's three crates from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// crates.io, at this version requirement (by default this gridsync's version).
    Registry(String),
    /// A git repository, at a revision (a branch, tag or commit) or its default branch.
    Git {
        /// The repository's URL.
        url: String,
        /// A commit, branch or tag; `None` for the default branch.
        rev: Option<String>,
    },
    /// A local checkout of gridsync: absolute, or relative to the new project's directory.
    Path(PathBuf),
}

impl Source {
    /// The registry, at this gridsync's version.
    pub fn registry() -> Source {
        Source::Registry(env!("CARGO_PKG_VERSION").to_string())
    }

    /// The default source of a new project, and a line that says which and why: the
    /// checkout this gridsync was built from ([`built_from`]), by its absolute path, where that
    /// is a gridsync checkout that still exists; otherwise — built from a registry's package
    /// (`cargo install gridsync-cli`), or the checkout is gone — the registry at this version.
    pub fn default_for() -> (Source, String) {
        Source::default_from(built_from())
    }

    /// [`Source::default_for`] for a gridsync built from `built_from`.
    pub fn default_from(built_from: &Path) -> (Source, String) {
        let version = env!("CARGO_PKG_VERSION");
        let from_registry = built_from.components().any(|c| c.as_os_str() == "registry");
        if from_registry {
            return (
                Source::registry(),
                format!("gridsync {version} from crates.io (this gridsync was installed from it)"),
            );
        }
        match checkout_root(built_from) {
            Ok(root) => (
                Source::Path(root),
                format!(
                    "gridsync from the checkout this binary was built from, {}",
                    built_from.display()
                ),
            ),
            Err(_) => (
                Source::registry(),
                format!(
                    "gridsync {version} from crates.io: the checkout this binary was built from \
                     ({}) is gone; where gridsync is not published yet, give --path DIR or \
                     --git URL",
                    built_from.display()
                ),
            ),
        }
    }

    /// A local checkout at `checkout` (absolute, or relative to the current directory), written
    /// relative to the project at `project` where both are relative or share a root.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] where `checkout` is not a gridsync checkout (its `Cargo.toml`,
    /// `gpu/` and `builder/`).
    pub fn checkout(checkout: &Path, project: &Path) -> Result<Source> {
        let root = checkout_root(checkout)?;
        let project = absolute(project)?;
        Ok(Source::Path(relative(&project, &root).unwrap_or(root)))
    }

    /// The dependency's value in a manifest for crate `krate` at `dir` in the checkout (the
    /// root `""`, `"gpu"`, `"builder"`), seen from `depth` directories below the project.
    fn spec(&self, krate: &str, dir: &str, depth: usize) -> String {
        let package = if krate == "gridsync-gpu" {
            ", package = \"gridsync-gpu\""
        } else {
            ""
        };
        match self {
            Source::Registry(v) if package.is_empty() => format!("\"{v}\""),
            Source::Registry(v) => format!("{{ version = \"{v}\"{package} }}"),
            Source::Git { url, rev } => {
                let rev = rev
                    .as_ref()
                    .map(|r| format!(", rev = \"{r}\""))
                    .unwrap_or_default();
                format!("{{ git = \"{url}\"{rev}{package} }}")
            }
            Source::Path(p) => {
                let mut path = if p.is_absolute() {
                    p.clone()
                } else {
                    let mut up = PathBuf::new();
                    for _ in 0..depth {
                        up.push("..");
                    }
                    up.join(p)
                };
                if !dir.is_empty() {
                    path.push(dir);
                }
                let text = path.to_string_lossy().replace('\\', "/");
                format!("{{ path = \"{text}\"{package} }}")
            }
        }
    }
}

/// `checkout`'s absolute path, where it is a gridsync checkout (its `Cargo.toml`, `gpu/` and
/// `builder/`).
///
/// # Errors
/// [`Error::InvalidInput`] naming `--path` where it is not one, or not there.
fn checkout_root(checkout: &Path) -> Result<PathBuf> {
    let root = std::fs::canonicalize(checkout)
        .map_err(|e| Error::InvalidInput(format!("--path {}: {e}", checkout.display())))?;
    for part in ["Cargo.toml", "gpu/Cargo.toml", "builder/Cargo.toml"] {
        if !root.join(part).is_file() {
            return Err(Error::InvalidInput(format!(
                "--path {}: not a gridsync checkout (no {part})",
                checkout.display()
            )));
        }
    }
    Ok(root)
}

/// A project to write.
#[derive(Clone, Debug)]
pub struct NewProject {
    /// Its directory (made; must not exist, or be empty).
    pub dir: PathBuf,
    /// Its package name (the directory's name by default).
    pub name: String,
    /// Where gridsync comes from.
    pub source: Source,
}

impl NewProject {
    /// A project at `dir` named after it.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a directory whose name is not a usable package name.
    pub fn new(dir: impl AsRef<Path>, source: Source) -> Result<NewProject> {
        let dir = dir.as_ref().to_path_buf();
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        NewProject::named(dir, &name, source)
    }

    /// A project at `dir` named `name`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a name that is not a package name cargo takes (ASCII
    /// letters, digits, `-` and `_`, starting with a letter) or that would clash with the
    /// project's own crates (`kernels`, `gridsync`, `gpu`).
    pub fn named(dir: impl AsRef<Path>, name: &str, source: Source) -> Result<NewProject> {
        let valid = name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            && name.len() <= 64;
        if !valid {
            return Err(Error::InvalidInput(format!(
                "{name:?} is not a package name: ASCII letters, digits, '-' and '_', starting \
                 with a letter (choose one with --name)"
            )));
        }
        let taken = [
            "kernels",
            "gridsync",
            "gridsync-gpu",
            "gridsync-builder",
            "gpu",
        ];
        if taken.contains(&name.replace('_', "-").as_str()) {
            return Err(Error::InvalidInput(format!(
                "{name:?} is the name of one of the project's own crates: choose another with --name"
            )));
        }
        Ok(NewProject {
            dir: dir.as_ref().to_path_buf(),
            name: name.to_string(),
            source,
        })
    }

    /// Every file of the project: its path inside the project, and its text.
    pub fn files(&self) -> Vec<(PathBuf, String)> {
        let s = &self.source;
        let manifest = format!(
            "# Kernels of your own on gridsync's primitives: `kernels/` is the device crate (built to PTX by
# build.rs, and run on the simulator from the host), `src/` the host program. Made by
# `gridsync new`; `cargo run -- --simulate` runs it without a GPU.
[package]
name = \"{name}\"
version = \"0.1.0\"
edition = \"2024\"
publish = false

[dependencies]
gridsync = {gridsync}
kernels = {{ path = \"kernels\" }}

[build-dependencies]
gridsync-builder = {builder}

# A workspace of its own, with `kernels/` as a member.
[workspace]
",
            name = self.name,
            gridsync = s.spec("gridsync", "", 0),
            builder = s.spec("gridsync-builder", "builder", 0),
        );
        let kernels_manifest = format!(
            "[package]
name = \"kernels\"
version = \"0.1.0\"
edition = \"2024\"
publish = false

[dependencies]
# The primitives only: gridsync's own kernels stay out of this crate's PTX.
gpu = {gpu}
",
            gpu = s.spec("gridsync-gpu", "gpu", 1),
        );
        let config = "# cust's build script (find_cuda_helper) stops the build unless CUDA_LIBRARY_PATH names a
# directory with a `lib64/` subdirectory. Without CUDA, the one in build/ (no library in it)
# does: the driver is loaded at run time, never linked (gridsync links a stub where no driver
# is installed). With the CUDA toolkit installed, or CUDA_LIBRARY_PATH set, this is not needed.
[env]
CUDA_LIBRARY_PATH = { value = \"build/cuda-base\", relative = true }
";
        let lib64 =
            "No library here, on purpose: `cust`'s build script needs `CUDA_LIBRARY_PATH` to name a
directory with a `lib64/` subdirectory, and `.cargo/config.toml` points it at `build/cuda-base`
for machines without the CUDA toolkit. Nothing here is linked: the CUDA driver is found at run
time.
";
        let readme = format!(
            "# {name}

Kernels of your own on gridsync's primitives (its API: `cargo doc --open` in this project).

```sh
cargo run -- --simulate    # on gridsync's simulator: no GPU needed
cargo run                  # on GPU 0 (falls back to the simulator without one)
cargo test                 # the kernels under gridsync's race checker, on the simulator
```

- `kernels/src/lib.rs`: the device crate (`no_std` on the GPU, the same code on the simulator);
  `build.rs` builds it to PTX for every supported architecture with `gridsync-builder`.
- `src/main.rs`: loads the PTX, launches the kernels and checks them against the CPU; its
  tests run them under the checker (`gridsync::check::assert_race_free`: a data race, scope
  race or stuck wait fails the test with both lines), and show it finding a planted race.
- `rust-toolchain.toml`: the pinned nightly the device build needs (`rustup` installs it:
  `rustup toolchain install` in this directory, with `rust-src`).
- `.cargo/config.toml` and `build/cuda-base/`: what `cust` needs on a machine without CUDA.
",
            name = self.name
        );
        vec![
            (PathBuf::from("Cargo.toml"), manifest),
            (PathBuf::from("build.rs"), BUILD_RS.to_string()),
            (PathBuf::from("src/main.rs"), MAIN_RS.to_string()),
            (PathBuf::from("kernels/Cargo.toml"), kernels_manifest),
            (PathBuf::from("kernels/src/lib.rs"), KERNELS_RS.to_string()),
            (PathBuf::from("rust-toolchain.toml"), TOOLCHAIN.to_string()),
            (PathBuf::from(".cargo/config.toml"), config.to_string()),
            (
                PathBuf::from("build/cuda-base/lib64/README.md"),
                lib64.to_string(),
            ),
            (PathBuf::from(".gitignore"), "/target\n".to_string()),
            (PathBuf::from("README.md"), readme),
        ]
    }

    /// Writes the project; returns the files written.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if the directory exists and is not empty (nothing is written);
    /// [`Error::Io`] if a directory or file cannot be made.
    pub fn write(&self) -> Result<Vec<PathBuf>> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| Error::Io { path, source }
        };
        if self.dir.exists() {
            let mut entries = std::fs::read_dir(&self.dir).map_err(io(&self.dir))?;
            if entries.next().is_some() {
                return Err(Error::InvalidInput(format!(
                    "{} already exists and is not empty",
                    self.dir.display()
                )));
            }
        }
        let mut written = Vec::new();
        for (rel, text) in self.files() {
            let path = self.dir.join(&rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent))?;
            }
            std::fs::write(&path, text).map_err(io(&path))?;
            written.push(path);
        }
        Ok(written)
    }
}

/// `path` made absolute against the current directory, `..` and `.` resolved by name (the
/// project does not exist yet, so it cannot be canonicalized), its existing ancestor
/// canonicalized (so that symlinks compare as `checkout`'s do).
fn absolute(path: &Path) -> Result<PathBuf> {
    let cwd = std::env::current_dir().map_err(|source| Error::Io {
        path: PathBuf::from("."),
        source,
    })?;
    let mut out = PathBuf::new();
    for c in cwd.join(path).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    // The longest existing ancestor, canonicalized, then the rest by name.
    let mut rest = Vec::new();
    let mut base = out.as_path();
    loop {
        if let Ok(real) = std::fs::canonicalize(base) {
            let mut full = real;
            for part in rest.iter().rev() {
                full.push(part);
            }
            return Ok(full);
        }
        match (base.file_name(), base.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                base = parent;
            }
            _ => return Ok(out),
        }
    }
}

/// `to` relative to `from` (both absolute), or `None` where they share no root.
fn relative(from: &Path, to: &Path) -> Option<PathBuf> {
    let (f, t): (Vec<_>, Vec<_>) = (from.components().collect(), to.components().collect());
    if f.first() != t.first() {
        return None;
    }
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..f.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c);
    }
    Some(if out.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        let r = |a: &str, b: &str| relative(Path::new(a), Path::new(b)).unwrap();
        assert_eq!(r("/a/b/c", "/a/x"), PathBuf::from("../../x"));
        assert_eq!(r("/a/b", "/a/b"), PathBuf::from("."));
        assert_eq!(r("/a", "/a/b/c"), PathBuf::from("b/c"));
    }

    #[test]
    fn names_are_checked() {
        for bad in ["", "1x", "a b", "kernels", "gridsync", "gpu", "x/y", "é"] {
            assert!(
                NewProject::named("d", bad, Source::registry()).is_err(),
                "{bad}"
            );
        }
        assert!(NewProject::named("d", "my-kernels_2", Source::registry()).is_ok());
    }

    #[test]
    fn the_default_is_the_checkout_built_from_while_it_is_there() {
        let here = built_from();
        let (s, why) = Source::default_from(here);
        assert_eq!(s, Source::Path(std::fs::canonicalize(here).unwrap()));
        assert!(why.contains("checkout"), "{why}");
        let gone = Path::new("/nonexistent/gridsync-checkout");
        let (s, why) = Source::default_from(gone);
        assert_eq!(s, Source::registry());
        assert!(why.contains("is gone") && why.contains("--path"), "{why}");
        let installed = Path::new("/root/.cargo/registry/src/index.crates.io-1/gridsync-0.1.0");
        let (s, why) = Source::default_from(installed);
        assert_eq!(s, Source::registry());
        assert!(why.contains("installed from it"), "{why}");
    }

    #[test]
    fn sources_become_dependency_specs() {
        let reg = Source::Registry("0.1.0".into());
        assert_eq!(reg.spec("gridsync", "", 0), "\"0.1.0\"");
        assert_eq!(
            reg.spec("gridsync-gpu", "gpu", 1),
            "{ version = \"0.1.0\", package = \"gridsync-gpu\" }"
        );
        let git = Source::Git {
            url: "https://example.org/g.git".into(),
            rev: Some("abc".into()),
        };
        assert_eq!(
            git.spec("gridsync-builder", "builder", 0),
            "{ git = \"https://example.org/g.git\", rev = \"abc\" }"
        );
        let path = Source::Path(PathBuf::from("../.."));
        assert_eq!(path.spec("gridsync", "", 0), "{ path = \"../..\" }");
        assert_eq!(
            path.spec("gridsync-gpu", "gpu", 1),
            "{ path = \"../../../gpu\", package = \"gridsync-gpu\" }"
        );
        let abs = Source::Path(PathBuf::from("/src/gridsync"));
        assert_eq!(
            abs.spec("gridsync-builder", "builder", 0),
            "{ path = \"/src/gridsync/builder\" }"
        );
    }
}
