//! `profil-report runtime-path` (not implemented yet).

use std::io::Write;

use crate::{Error, Result};

/// Arguments of `profil-report runtime-path`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Run the subcommand.
pub fn run(_args: &Args, _out: &mut impl Write) -> Result<()> {
    Err(Error::input("runtime-path: not implemented yet"))
}
