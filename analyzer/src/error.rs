//! The analyzer's error type: one line of text and an exit status.

use std::fmt;

/// An error to report on one line of stderr (prefixed `profil-report: ` by `main`).
#[derive(Debug)]
pub struct Error {
    message: String,
    code: u8,
    broken_pipe: bool,
}

impl Error {
    /// Bad input or bad usage: exit status 2.
    pub fn input(message: impl Into<String>) -> Self {
        Error {
            message: message.into(),
            code: 2,
            broken_pipe: false,
        }
    }

    /// A fatal verdict that gprof itself ends with status 1 (`--gprof` reproduces gprof's exit
    /// status where gprof has a message of its own, e.g. "gmon.out file is missing histogram").
    pub fn gprof_fatal(message: impl Into<String>) -> Self {
        Error {
            code: 1,
            ..Error::input(message)
        }
    }

    /// Whether this is a write to a closed pipe (`profil-report … | head`): the reader has
    /// all it wanted, so `main` ends quietly with status 0 instead of reporting an error.
    pub fn is_broken_pipe(&self) -> bool {
        self.broken_pipe
    }

    /// The exit status for this error.
    pub fn exit_code(&self) -> u8 {
        self.code
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        // A closed pipe on stdout (`profil-report … | head`) is not worth a message,
        // but it must still end the program; everything else is an error.
        let mut err = Error::input(format!("write error: {e}"));
        err.broken_pipe = e.kind() == std::io::ErrorKind::BrokenPipe;
        err
    }
}

/// Shorthand for results in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
