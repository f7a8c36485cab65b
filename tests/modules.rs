//! No import cycles between the modules of any crate of the workspace: each module names
//! only modules below it, so each can be read, and changed, without those above it.
//! `scripts/module-cycles.py` finds the cycles (its docstring says how it reads a crate);
//! this runs it, on the code without its tests and with them, so that a new cycle fails
//! `just test` and CI.

use harness::testing::{Checked, Needs, Skipped};
use std::path::Path;
use std::process::Command;

harness::test_main!(Needs::Cpu => [no_crate_has_an_import_cycle]);

fn no_crate_has_an_import_cycle() -> Checked {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = root.join("scripts/module-cycles.py");
    if !script.exists() {
        return Err(Skipped(format!(
            "{} not present (GPU bundle)",
            script.display()
        )));
    }
    for flags in [&[][..], &["--tests"][..]] {
        let out = Command::new("python3")
            .arg(&script)
            .args(flags)
            .current_dir(root)
            .output()
            .map_err(|e| Skipped(format!("no python3: {e}")))?;
        assert!(
            out.status.success(),
            "import cycles (module-cycles.py {}):\n{}{}",
            flags.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}
