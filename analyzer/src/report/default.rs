//! The default report (better than gprof's flat profile).

use std::io::Write;

use profil_symbols::ElfImage;

use super::{Inputs, ReportArgs};
use crate::{Error, Result};

/// Print the default report.
pub fn run(
    _args: &ReportArgs,
    _inputs: &Inputs,
    _image: &ElfImage<'_>,
    _out: &mut impl Write,
) -> Result<()> {
    Err(Error::input(
        "the default report is not written yet; use --gprof -b -p",
    ))
}
