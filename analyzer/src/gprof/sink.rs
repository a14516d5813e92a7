//! The printers' buffer and standard output. Each printer writes into one `Vec<u8>` (gprof's
//! formats are hand-written into it, [`super::printf`]); [`spill`] hands the buffer to
//! standard output once it holds a megabyte, so that a report of tens of megabytes reuses one
//! buffer instead of growing (and faulting in) a new one. A module of its own so that the
//! printers and the report that calls them need not import each other.

/// How much printed text a printer holds before [`spill`] hands it on.
const SPILL_AT: usize = 1 << 20;

/// Write `out` to `sink` and empty it once it holds a megabyte.
#[inline]
pub(super) fn spill(out: &mut Vec<u8>, sink: &mut dyn std::io::Write) -> std::io::Result<()> {
    if out.len() >= SPILL_AT {
        sink.write_all(out)?;
        out.clear();
    }
    Ok(())
}
