//! `gridsync new PATH`: writes a ready project of your own kernels (`gridsync_cli::scaffold`).

use clap::Args;
use gridsync::Result;
use gridsync_cli::scaffold::{NewProject, Source};
use std::path::PathBuf;

#[derive(Args)]
pub struct NewArgs {
    /// The project's directory (made; it must not exist, or be empty).
    path: PathBuf,
    /// The package name [default: the directory's name].
    #[arg(long)]
    name: Option<String>,
    /// Take gridsync from this git repository (its default branch, or --rev).
    #[arg(long, value_name = "URL", conflicts_with_all = ["path_to", "version"])]
    git: Option<String>,
    /// With --git: a commit, branch or tag.
    #[arg(long, value_name = "REV", requires = "git")]
    rev: Option<String>,
    /// Take gridsync from a local checkout (written relative to the project).
    #[arg(long = "path", value_name = "DIR", conflicts_with = "version")]
    path_to: Option<PathBuf>,
    /// Take gridsync from crates.io at this version (e.g. this gridsync's, 0.1.0) [default: the
    /// checkout this gridsync was built from, while it exists; else crates.io at this version].
    #[arg(long, value_name = "VERSION")]
    version: Option<String>,
}

pub fn command(args: &NewArgs, json: bool) -> Result<()> {
    let source = match (&args.git, &args.path_to, &args.version) {
        (Some(url), _, _) => Source::Git {
            url: url.clone(),
            rev: args.rev.clone(),
        },
        (None, Some(dir), _) => Source::checkout(dir, &args.path)?,
        (None, None, Some(v)) => Source::Registry(v.clone()),
        (None, None, None) => {
            let (source, why) = Source::default_for();
            // Said on stderr, so that --json's output stays one document.
            eprintln!(
                "taking {why} (--version V for crates.io, --git URL or --path DIR for another)"
            );
            source
        }
    };
    let project = match &args.name {
        Some(name) => NewProject::named(&args.path, name, source)?,
        None => NewProject::new(&args.path, source)?,
    };
    let written = project.write()?;
    if json {
        let files: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        return super::output::print_json(&serde_json::json!({
            "name": project.name,
            "dir": project.dir.display().to_string(),
            "source": format!("{:?}", project.source),
            "files": files,
        }));
    }
    println!(
        "created {} ({} files) in {}",
        project.name,
        written.len(),
        project.dir.display()
    );
    println!();
    println!("  cd {}", project.dir.display());
    println!("  cargo run -- --simulate    # on gridsync's simulator, no GPU needed");
    println!("  cargo run                  # on GPU 0");
    Ok(())
}
