//! `profil-report … | head`: when the reader closes the pipe, the program ends quietly with
//! status 0 rather than printing a write error.

use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};

#[test]
fn a_closed_stdout_pipe_ends_quietly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe() writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
    // SAFETY: pipe() just returned these two descriptors, and nothing else owns them.
    let (read_end, write_end) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // The reader is gone before the program writes anything, so its first write fails EPIPE.
    drop(read_end);
    let out = Command::new(env!("CARGO_BIN_EXE_profil-report"))
        .arg("dump")
        .arg(root.join("fixtures/gcc-pg/loop2.gmon"))
        .arg("--exe")
        .arg(root.join("fixtures/gcc-pg/loop2"))
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::piped())
        .output()
        .expect("run profil-report");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.is_empty(), "stderr: {stderr}");
    assert_eq!(out.status.code(), Some(0), "status: {:?}", out.status);
}
