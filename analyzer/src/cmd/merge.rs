//! `profil-report merge -o OUT IN... [--exe PROG] [--to FORMAT]`: sum gmon files.
//!
//! `gprof -b -p PROG OUT` prints exactly what `gprof -b -p PROG IN...` prints: the files are
//! summed with gprof's own reading rules ([`gmon::merge`]), and the result is plain summed
//! records. Unlike `gprof -s`, arcs keep their call-site addresses and no line symbols or
//! garbage header bytes are introduced.

use std::io::Write;
use std::path::PathBuf;

use gmon::merge::Profile;

use super::convert::{report_notes, write_profile, To};
use super::dump::{choose_target, parse_input, read_input};
use crate::{Error, Result};

/// What `profil-report merge` is asked for (the binary builds it from its command line).
#[derive(Debug, Clone)]
pub struct Options {
    /// Where to write the sum (replaced atomically).
    pub output: PathBuf,
    /// The gmon files to sum, in order (order matters to gprof's rules, as it does to gprof).
    pub inputs: Vec<PathBuf>,
    /// The executable the profiles belong to (decides pointer size and byte order; guessed
    /// from the first file without it).
    pub exe: Option<PathBuf>,
    /// Output format.
    pub to: To,
}

/// Run the subcommand. Notes about adaptations go to `out`.
pub fn run(args: &Options, out: &mut impl Write) -> Result<()> {
    let mut profile = Profile::new();
    let mut target = None;
    for path in &args.inputs {
        let data = read_input(path)?;
        let t = match target {
            Some(t) => t,
            None => {
                let (t, _) = choose_target(args.exe.as_deref(), &data)?;
                target = Some(t);
                t
            }
        };
        let file = parse_input(path, &data, t)?;
        profile
            .add(&file)
            .map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
    }
    let target = target.ok_or_else(|| Error::input("merge: no input files"))?;
    let report = write_profile(&args.output, &profile, target, args.to.into())?;
    for line in report_notes(&args.output, &report) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}
