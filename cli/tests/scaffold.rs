//! `gridsync new`: the project it writes is `examples/own-kernel`, file for file (the example
//! is what CI builds and runs); names, sources and existing directories are checked. Building
//! and running a new project is CI's step (it takes the packaged crates and minutes).

mod common;

use gridsync_cli::scaffold::{NewProject, Source};
use std::path::{Path, PathBuf};

/// A fresh directory under the system's temporary one, removed at the end of the test.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "gridsync-new-{tag}-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every file under `dir` (relative), but the lock file and build outputs.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in std::fs::read_dir(dir.join(&rel)).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name();
            if name == "target" || name == "Cargo.lock" {
                continue;
            }
            let path = rel.join(&name);
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_new_project_is_the_example_file_for_file() {
    let example = gridsync_cli::scaffold::built_from().join("examples/own-kernel");
    let project = NewProject::named(
        "own-kernel",
        "own-kernel",
        Source::Path(PathBuf::from("../..")),
    )
    .unwrap();
    let files = project.files();
    for (rel, text) in &files {
        let have = std::fs::read_to_string(example.join(rel))
            .unwrap_or_else(|e| panic!("examples/own-kernel/{}: {e}", rel.display()));
        assert_eq!(
            &have,
            text,
            "examples/own-kernel/{} differs from what `gridsync new --path ../..` writes",
            rel.display()
        );
    }
    let mut written: Vec<PathBuf> = files.into_iter().map(|(p, _)| p).collect();
    written.sort();
    assert_eq!(
        files_under(&example),
        written,
        "the example has files `new` does not write"
    );
}

#[test]
fn a_project_is_written_once_and_named_well() {
    let tmp = Scratch::new("lib");
    let dir = tmp.0.join("my-kernels");
    let project = NewProject::new(&dir, Source::registry()).unwrap();
    assert_eq!(project.name, "my-kernels");
    let written = project.write().unwrap();
    assert_eq!(written.len(), project.files().len());
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    assert!(manifest.contains("name = \"my-kernels\""), "{manifest}");
    assert!(
        manifest.contains(&format!("gridsync = \"{version}\"")),
        "{manifest}"
    );
    let kernels = std::fs::read_to_string(dir.join("kernels/Cargo.toml")).unwrap();
    assert!(
        kernels.contains(&format!(
            "gpu = {{ version = \"{version}\", package = \"gridsync-gpu\" }}"
        )),
        "{kernels}"
    );
    assert!(dir.join("build/cuda-base/lib64").is_dir());
    // A second time: refused, nothing changed.
    let e = project.write().unwrap_err();
    assert!(e.to_string().contains("not empty"), "{e}");
    assert_eq!(
        std::fs::read_to_string(dir.join("Cargo.toml")).unwrap(),
        manifest
    );
    // An empty directory is fine; a bad name is not.
    let empty = tmp.0.join("empty_dir");
    std::fs::create_dir(&empty).unwrap();
    NewProject::new(&empty, Source::registry())
        .unwrap()
        .write()
        .unwrap();
    for bad in ["9lives", "kernels", "gridsync", "with space"] {
        assert!(
            NewProject::new(tmp.0.join(bad), Source::registry()).is_err(),
            "{bad}"
        );
    }
    // A checkout that is not gridsync is refused; this one is taken, relative to the project.
    assert!(Source::checkout(&tmp.0, &dir).is_err());
    let here = gridsync_cli::scaffold::built_from();
    match Source::checkout(here, &here.join("examples/own-kernel")).unwrap() {
        Source::Path(p) => assert_eq!(p, PathBuf::from("../..")),
        other => panic!("{other:?}"),
    }
}

use common::cli as gridsync;

#[test]
fn the_cli_writes_projects_from_each_source_and_refuses_what_it_cannot() {
    let tmp = Scratch::new("cli");
    let dir = tmp.0.join("from-git");
    let d = dir.to_str().unwrap();
    let out = gridsync(&[
        "--json",
        "new",
        d,
        "--git",
        "https://example.org/gridsync.git",
        "--rev",
        "v0.1.0",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["name"], "from-git");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains(
            "gridsync = { git = \"https://example.org/gridsync.git\", rev = \"v0.1.0\" }"
        ),
        "{manifest}"
    );
    // Again into the same directory: an error, exit status non-zero.
    let again = gridsync(&["new", d]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("not empty"));
    // A local checkout, and a name of one's own.
    let here = gridsync_cli::scaffold::built_from().to_str().unwrap();
    let local = tmp.0.join("local");
    let out = gridsync(&[
        "new",
        local.to_str().unwrap(),
        "--path",
        here,
        "--name",
        "mine",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let manifest = std::fs::read_to_string(local.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("name = \"mine\""), "{manifest}");
    assert!(manifest.contains("gridsync = { path = \""), "{manifest}");
    // Conflicting sources, a checkout that is not one, a bad name: refused.
    for args in [
        vec!["new", "x", "--git", "u", "--path", here],
        vec![
            "new",
            tmp.0.join("y").to_str().unwrap(),
            "--path",
            tmp.0.to_str().unwrap(),
        ],
        vec!["new", tmp.0.join("9z").to_str().unwrap()],
        vec!["new", "x", "--rev", "abc"],
    ] {
        let out = gridsync(&args);
        assert!(!out.status.success(), "{args:?} was accepted");
    }
}
