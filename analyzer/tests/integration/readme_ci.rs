//! `.ci/run` must run exactly the README's test command, so what CI proves is what the
//! README promises.

use std::path::Path;

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("analyzer/ has a parent")
}

/// The shell commands in fenced `sh` blocks of README.md, in order.
fn readme_commands() -> Vec<String> {
    let text = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let mut cmds = Vec::new();
    let mut in_sh = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_sh = !in_sh && t == "```sh";
            continue;
        }
        if in_sh && !t.is_empty() && !t.starts_with('#') {
            cmds.push(t.to_string());
        }
    }
    cmds
}

#[test]
fn ci_runs_the_readme_test_command() {
    let ci = std::fs::read_to_string(repo_root().join(".ci/run")).expect(".ci/run");
    let last = ci
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with('#'))
        .expect(".ci/run has commands")
        .to_string();
    let cmds = readme_commands();
    assert!(
        cmds.len() >= 2,
        "README.md must carry the main-job and the test command in ```sh blocks, found {cmds:?}"
    );
    assert_eq!(
        cmds[1], last,
        "the README's test command (second ```sh command) must be exactly what .ci/run runs last"
    );
}
