//! The profile reports (`profil-report [OPTIONS] [FILE]...`; not implemented yet).

use std::io::Write;
use std::path::PathBuf;

use crate::{Error, Result};

/// Arguments of the report (the command without a subcommand).
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// gmon files and the executable, in any order.
    pub files: Vec<PathBuf>,
}

/// Print the report.
pub fn run(_args: &ReportArgs, _out: &mut impl Write) -> Result<()> {
    Err(Error::input("report: not implemented yet"))
}
