//! Records the git commit the `flashlab` binary is built from, for the bench's JSON: the
//! GPU bundle runs where there is no repository, so it must be known at build time.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=FLASHLAB_GIT_COMMIT");
    let commit = std::env::var("FLASHLAB_GIT_COMMIT").ok().or_else(|| {
        let head = git(&["rev-parse", "HEAD"])?;
        // Uncommitted changes to tracked files make the commit alone a lie: say so.
        let dirty =
            git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        Some(if dirty { format!("{head}-dirty") } else { head })
    });
    // Rebuild when a source the binary is built from changes (an unstaged edit of a
    // kernel left a bench run saying a clean commit: bench/experiments/
    // 2026-11-26-decode-h100-runs), and when HEAD moves. Not when the index changes: a
    // `git add` leaves the sources and the dirty flag as they were, and watching the index
    // made every build link flashlab twice.
    for dir in [
        "src",
        "harness",
        "stages",
        "reference",
        "layout-viz",
        "protocol-viz",
    ] {
        println!("cargo:rerun-if-changed={dir}");
    }
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        let dir = Path::new(&dir);
        println!("cargo:rerun-if-changed={}", dir.join("HEAD").display());
        if let Some(reference) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={}", dir.join(reference).display());
        }
    }
    println!(
        "cargo:rustc-env=FLASHLAB_GIT_COMMIT={}",
        commit.unwrap_or_else(|| "unknown".to_string())
    );
}
