//! Summing profiles with gprof's rules, and writing the sum in any format.
//!
//! A [`Profile`] is what gprof holds in memory after reading its inputs: histogram records
//! with wide counters, the call-graph arcs, the sampling rate and the unit. Files are added
//! one by one with [`Profile::add`], which applies the rules of gprof 2.40's readers
//! (gprof-internals §1.6, `hist_read_rec` and `gmon_out_read`):
//!
//! * the first histogram record sets the rate (`hz`), the unit and the bin scale; later
//!   records must have the same unit and a scale within 1e-6 (the rate is not checked);
//! * a record with the same `[low_pc, high_pc)` as an earlier one is summed into it (with the
//!   same number of bins: gprof would misread a different count, so that is an error here);
//! * a record that overlaps an earlier one without being identical is an error naming both;
//!   disjoint records are kept side by side;
//! * a BSD file must have the same range and bin count as the first histogram ("incompatible
//!   with first gmon file"), and a 4.4BSD file the same rate ("profiling rate incompatible");
//! * arcs with the same `(from_pc, self_pc)` are summed, in order of first appearance.
//!
//! Unlike `gprof -s`, nothing is normalised to symbols or lines: the sum is plain summed
//! records, so `gprof -b -p PROG sum` prints what `gprof -b -p PROG in1 in2 ...` prints.
//!
//! Counters are `u64` in memory. [`Profile::write`] writes GNU files with a bin above 65535 as
//! several records over the same range (gprof sums identical ranges, so nothing is lost) and
//! arcs above 2^32 − 1 as several arcs; BSD formats hold a single 16-bit histogram, so bins
//! saturate at 65535 and the report says how many samples were clipped. An arc needing more
//! than [`MAX_ARC_PIECES`] records is refused rather than written as gigabytes. BSD output is
//! also checked against gprof's format detection: a file whose `low_pc` spells `gmon`, or an
//! old BSD file whose first bins spell the 4.4BSD version word, is refused, and an old BSD
//! file shorter than gprof's first reads is padded with zeros (fewer than one arc, ignored).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::fmt;

use crate::layout;
use crate::read::{BbLayout, GmonFile};
use crate::write::{HistHeader, Sink, WriteError, Writer};
use crate::{Dimension, Format};

/// The clock rate gprof assumes when no file states one (old BSD input): its `hertz()` falls
/// back to `sysconf(_SC_CLK_TCK)`, which is 100 on Linux.
pub const DEFAULT_HZ: u32 = 100;

/// One histogram with wide counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistogramSum {
    /// Start of the range (link-time address).
    pub low_pc: u64,
    /// End of the range, exclusive (link-time address).
    pub high_pc: u64,
    /// Summed bins.
    pub bins: Vec<u64>,
    /// Byte offset of the record that created it, in the file that created it.
    pub first_offset: u64,
}

/// One arc with a wide count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArcSum {
    /// Call site in the caller (link-time address).
    pub from_pc: u64,
    /// Address in the callee (link-time address).
    pub self_pc: u64,
    /// Summed count (saturating at `u64::MAX`).
    pub count: u64,
}

/// Output format for [`Profile::write`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// GNU tagged format, version 1.
    Gnu,
    /// 4.4BSD (`struct gmonhdr` with a rate).
    Bsd44,
    /// Old BSD (no rate: gprof will assume [`DEFAULT_HZ`]).
    OldBsd,
}

/// Why a file could not be added to a profile. `offset` is the byte offset, in the file being
/// added, of the record at fault.
#[derive(Clone, Debug, PartialEq)]
pub struct MergeError {
    /// Byte offset of the offending record in the file being added.
    pub offset: u64,
    /// What is wrong.
    pub kind: MergeErrorKind,
}

/// What makes a record incompatible with the profile.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum MergeErrorKind {
    /// A unit name or abbreviation different from the first histogram's.
    DimensionChanged {
        /// The first histogram's unit.
        first: Dimension,
        /// This record's unit.
        new: Dimension,
    },
    /// A bin scale (half-words per bin) more than 1e-6 away from the first histogram's.
    ScaleChanged {
        /// The first histogram's scale.
        first: f64,
        /// This record's scale.
        new: f64,
    },
    /// A range that overlaps an earlier one without being identical.
    Overlap {
        /// The earlier range.
        existing: (u64, u64),
        /// This record's range.
        new: (u64, u64),
    },
    /// The same range as an earlier record, with a different number of bins.
    BinCountChanged {
        /// The range.
        range: (u64, u64),
        /// Bins of the earlier record.
        existing: usize,
        /// Bins of this record.
        new: usize,
    },
    /// A 4.4BSD rate different from the rate of the first histogram.
    RateMismatch {
        /// Rate in effect.
        first: u32,
        /// This file's rate.
        new: u32,
    },
    /// A BSD file whose range or bin count differs from the first histogram's.
    IncompatibleBsd {
        /// First histogram: low_pc, high_pc, bins.
        first: (u64, u64, usize),
        /// This file: low_pc, high_pc, bins.
        new: (u64, u64, usize),
    },
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            MergeErrorKind::DimensionChanged { first, new } => write!(
                f,
                "dimension unit changed between histogram records (from {:?}/{:?} to {:?}/{:?})",
                Bytes(first.name_bytes()),
                first.abbrev as char,
                Bytes(new.name_bytes()),
                new.abbrev as char
            )?,
            MergeErrorKind::ScaleChanged { first, new } => write!(
                f,
                "different scales in histogram records ({first} vs {new} half-words per bin)"
            )?,
            MergeErrorKind::Overlap { existing, new } => write!(
                f,
                "overlapping histogram records: [{:#x}, {:#x}) overlaps [{:#x}, {:#x})",
                new.0, new.1, existing.0, existing.1
            )?,
            MergeErrorKind::BinCountChanged { range, existing, new } => write!(
                f,
                "histogram records for [{:#x}, {:#x}) have different bin counts ({existing} vs {new})",
                range.0, range.1
            )?,
            MergeErrorKind::RateMismatch { first, new } => write!(
                f,
                "profiling rate incompatible with first gmon file ({new} Hz vs {first} Hz)"
            )?,
            MergeErrorKind::IncompatibleBsd { first, new } => write!(
                f,
                "incompatible with first gmon file: [{:#x}, {:#x}) in {} bins vs [{:#x}, {:#x}) in {} bins",
                new.0, new.1, new.2, first.0, first.1, first.2
            )?,
        }
        write!(f, " at byte {}", self.offset)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for MergeError {}

struct Bytes<'a>(&'a [u8]);

impl fmt::Debug for Bytes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for &b in self.0 {
            if b.is_ascii_graphic() || b == b' ' {
                write!(f, "{}", b as char)?;
            } else {
                write!(f, "\\x{b:02x}")?;
            }
        }
        f.write_str("\"")
    }
}

/// What [`Profile::write`] had to do to fit the profile into the chosen format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteReport {
    /// Histogram records written.
    pub histogram_records: u64,
    /// Extra GNU histogram records written because a bin exceeded 65535.
    pub extra_histogram_records: u64,
    /// Arc records written.
    pub arc_records: u64,
    /// Extra arcs written because a count exceeded the format's counter.
    pub extra_arc_records: u64,
    /// Samples lost because a BSD bin saturated at 65535.
    pub clipped_samples: u64,
}

/// Why [`Profile::write`] failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProfileWriteError<E> {
    /// The writer (or its sink) failed.
    Write(WriteError<E>),
    /// BSD formats hold exactly one histogram; the profile has this many.
    TooManyHistograms(usize),
    /// Old BSD has no rate field: gprof would read it at [`DEFAULT_HZ`], not at this rate.
    RateNotRepresentable(u32),
    /// The bins of a BSD histogram exceed the 2^31-byte limit of `ncnt`, or the GNU `hist_size`
    /// field.
    TooManyBins(usize),
    /// The file would be misread by gprof's format detection (the reason is given).
    Ambiguous(&'static str),
    /// An arc count so large that it would need more than [`MAX_ARC_PIECES`] records of the
    /// output format's counter width.
    CountTooLarge {
        /// Call site.
        from_pc: u64,
        /// Callee address.
        self_pc: u64,
        /// The count.
        count: u64,
    },
}

/// At most this many records are written for one arc whose count exceeds the format's counter
/// (2^32 − 1 for GNU and 32-bit BSD): counts up to ~4.4 × 10^12 calls. Beyond that,
/// [`Profile::write`] fails instead of writing gigabytes.
pub const MAX_ARC_PIECES: u64 = 1024;

impl<E: fmt::Display> fmt::Display for ProfileWriteError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProfileWriteError::Write(e) => write!(f, "{e}"),
            ProfileWriteError::TooManyHistograms(n) => write!(
                f,
                "BSD formats hold one histogram but this profile has {n} (write GNU format instead)"
            ),
            ProfileWriteError::RateNotRepresentable(r) => write!(
                f,
                "old BSD files have no rate field and gprof reads them at {DEFAULT_HZ} Hz, but this profile was sampled at {r} Hz (write 4.4BSD or GNU format instead)"
            ),
            ProfileWriteError::TooManyBins(n) => write!(f, "{n} bins do not fit the format's size field"),
            ProfileWriteError::Ambiguous(why) => write!(
                f,
                "gprof would not recognise this file's format: {why} (write GNU format instead)"
            ),
            ProfileWriteError::CountTooLarge { from_pc, self_pc, count } => write!(
                f,
                "arc {from_pc:#x} -> {self_pc:#x} has {count} calls, more than {MAX_ARC_PIECES} records of this format can carry"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl<E: fmt::Debug + fmt::Display> std::error::Error for ProfileWriteError<E> {}

fn retarget<E>(e: ProfileWriteError<core::convert::Infallible>) -> ProfileWriteError<E> {
    match e {
        ProfileWriteError::Write(WriteError::Sink(never)) => match never {},
        ProfileWriteError::Write(WriteError::TooWide { field, value }) => {
            ProfileWriteError::Write(WriteError::TooWide { field, value })
        }
        ProfileWriteError::Write(WriteError::BinCount { expected, actual }) => {
            ProfileWriteError::Write(WriteError::BinCount { expected, actual })
        }
        ProfileWriteError::TooManyHistograms(n) => ProfileWriteError::TooManyHistograms(n),
        ProfileWriteError::RateNotRepresentable(r) => ProfileWriteError::RateNotRepresentable(r),
        ProfileWriteError::TooManyBins(n) => ProfileWriteError::TooManyBins(n),
        ProfileWriteError::Ambiguous(w) => ProfileWriteError::Ambiguous(w),
        ProfileWriteError::CountTooLarge {
            from_pc,
            self_pc,
            count,
        } => ProfileWriteError::CountTooLarge {
            from_pc,
            self_pc,
            count,
        },
    }
}

impl<E> From<WriteError<E>> for ProfileWriteError<E> {
    fn from(e: WriteError<E>) -> Self {
        ProfileWriteError::Write(e)
    }
}

/// Profiles summed with gprof's rules. See the [module docs](self).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    /// Histograms in order of first appearance.
    pub histograms: Vec<HistogramSum>,
    /// Arcs in order of first appearance, summed by `(from_pc, self_pc)`.
    pub arcs: Vec<ArcSum>,
    /// Version-1 basic-block counts summed by address, in order of first appearance.
    pub basic_blocks: Vec<(u64, u64)>,
    /// gprof's `hz`: the rate of the first histogram that states one; after an old BSD file
    /// with no rate in effect, [`DEFAULT_HZ`]. `None` if no histogram was read yet.
    pub hz: Option<u32>,
    /// The unit of the first histogram ("seconds"/'s' until one is read).
    pub dimension: Dimension,
    /// Format of the first file added.
    pub first_format: Option<Format>,
    /// Number of files added.
    pub files: usize,
    scale: Option<f64>,
    arc_index: BTreeMap<(u64, u64), usize>,
    bb_index: BTreeMap<u64, usize>,
}

impl Profile {
    /// An empty profile.
    pub fn new() -> Self {
        Profile::default()
    }

    /// A profile holding one file (for format conversion).
    pub fn from_file(file: &GmonFile<'_>) -> Result<Self, MergeError> {
        let mut p = Profile::new();
        p.add(file)?;
        Ok(p)
    }

    /// Total samples over all histograms.
    pub fn total_samples(&self) -> u128 {
        self.histograms
            .iter()
            .flat_map(|h| h.bins.iter())
            .map(|&b| u128::from(b))
            .sum()
    }

    /// Add one file, applying gprof's rules. On error the profile is left unchanged.
    pub fn add(&mut self, file: &GmonFile<'_>) -> Result<(), MergeError> {
        let mut next = self.clone();
        next.add_in_place(file)?;
        *self = next;
        Ok(())
    }

    fn add_in_place(&mut self, file: &GmonFile<'_>) -> Result<(), MergeError> {
        if self.first_format.is_none() {
            self.first_format = Some(file.format());
        }
        self.files += 1;
        match file.format() {
            Format::Gnu { .. } => {
                for h in &file.histograms {
                    self.add_gnu_histogram(h)?;
                }
            }
            Format::Bsd44 | Format::OldBsd => {
                if let Some(h) = file.histograms.first() {
                    self.add_bsd_histogram(h)?;
                }
            }
        }
        for a in &file.arcs {
            self.add_arc(a.from_pc, a.self_pc, a.count);
        }
        for bb in &file.basic_blocks {
            if bb.layout == BbLayout::V1 {
                for (addr, count) in bb.blocks() {
                    match self.bb_index.get(&addr) {
                        Some(&i) => {
                            let c = &mut self.basic_blocks[i].1;
                            *c = c.saturating_add(count);
                        }
                        None => {
                            self.bb_index.insert(addr, self.basic_blocks.len());
                            self.basic_blocks.push((addr, count));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Add one arc (summed with an earlier arc of the same `(from_pc, self_pc)`).
    pub fn add_arc(&mut self, from_pc: u64, self_pc: u64, count: u64) {
        match self.arc_index.get(&(from_pc, self_pc)) {
            Some(&i) => {
                let c = &mut self.arcs[i].count;
                *c = c.saturating_add(count);
            }
            None => {
                self.arc_index.insert((from_pc, self_pc), self.arcs.len());
                self.arcs.push(ArcSum {
                    from_pc,
                    self_pc,
                    count,
                });
            }
        }
    }

    fn add_gnu_histogram(&mut self, h: &crate::Histogram<'_>) -> Result<(), MergeError> {
        let err = |kind| MergeError {
            offset: h.offset,
            kind,
        };
        let scale = h.gprof_scale();
        match self.scale {
            None => {
                self.hz = Some(h.prof_rate.unwrap_or(DEFAULT_HZ));
                self.dimension = h.dimension;
                self.scale = Some(scale);
            }
            Some(first) => {
                if h.dimension.name_bytes() != self.dimension.name_bytes()
                    || h.dimension.abbrev != self.dimension.abbrev
                {
                    return Err(err(MergeErrorKind::DimensionChanged {
                        first: self.dimension,
                        new: h.dimension,
                    }));
                }
                // gprof: fabs(hist_scale - n_hist_scale) > 0.000001 (NaN passes).
                if (first - scale).abs() > 0.000001 {
                    return Err(err(MergeErrorKind::ScaleChanged { first, new: scale }));
                }
            }
        }
        self.sum_or_insert(h, err)
    }

    fn sum_or_insert(
        &mut self,
        h: &crate::Histogram<'_>,
        err: impl Fn(MergeErrorKind) -> MergeError,
    ) -> Result<(), MergeError> {
        if let Some(existing) = self
            .histograms
            .iter_mut()
            .find(|e| e.low_pc == h.low_pc && e.high_pc == h.high_pc)
        {
            if existing.bins.len() != h.bins.len() {
                return Err(err(MergeErrorKind::BinCountChanged {
                    range: (h.low_pc, h.high_pc),
                    existing: existing.bins.len(),
                    new: h.bins.len(),
                }));
            }
            for (dst, src) in existing.bins.iter_mut().zip(h.bins.iter()) {
                *dst += u64::from(src);
            }
            return Ok(());
        }
        if let Some(e) = self
            .histograms
            .iter()
            .find(|e| e.low_pc.max(h.low_pc) < e.high_pc.min(h.high_pc))
        {
            return Err(err(MergeErrorKind::Overlap {
                existing: (e.low_pc, e.high_pc),
                new: (h.low_pc, h.high_pc),
            }));
        }
        self.histograms.push(HistogramSum {
            low_pc: h.low_pc,
            high_pc: h.high_pc,
            bins: h.bins.iter().map(u64::from).collect(),
            first_offset: h.offset,
        });
        Ok(())
    }

    fn add_bsd_histogram(&mut self, h: &crate::Histogram<'_>) -> Result<(), MergeError> {
        let err = |kind| MergeError {
            offset: h.offset,
            kind,
        };
        if let Some(rate) = h.prof_rate {
            match self.hz {
                Some(hz) if !self.histograms.is_empty() && hz != rate => {
                    return Err(err(MergeErrorKind::RateMismatch {
                        first: hz,
                        new: rate,
                    }));
                }
                _ if self.histograms.is_empty() => self.hz = Some(rate),
                _ => {}
            }
        }
        if let Some(first) = self.histograms.first() {
            if first.low_pc != h.low_pc
                || first.high_pc != h.high_pc
                || first.bins.len() != h.bins.len()
            {
                return Err(err(MergeErrorKind::IncompatibleBsd {
                    first: (first.low_pc, first.high_pc, first.bins.len()),
                    new: (h.low_pc, h.high_pc, h.bins.len()),
                }));
            }
            for (dst, src) in self.histograms[0].bins.iter_mut().zip(h.bins.iter()) {
                *dst += u64::from(src);
            }
        } else {
            self.scale = Some(h.gprof_scale());
            self.histograms.push(HistogramSum {
                low_pc: h.low_pc,
                high_pc: h.high_pc,
                bins: h.bins.iter().map(u64::from).collect(),
                first_offset: h.offset,
            });
        }
        // gprof: after a BSD file, a rate still unknown becomes hertz().
        if self.hz.is_none() {
            self.hz = Some(DEFAULT_HZ);
        }
        Ok(())
    }

    /// The rate gprof will use for this profile.
    pub fn effective_hz(&self) -> u32 {
        self.hz.unwrap_or(DEFAULT_HZ)
    }

    fn write_bsd<S: Sink>(
        &self,
        w: &mut Writer<S>,
        format: OutputFormat,
        hz: u32,
        report: &mut WriteReport,
    ) -> Result<(), ProfileWriteError<S::Error>> {
        if self.histograms.len() > 1 {
            return Err(ProfileWriteError::TooManyHistograms(self.histograms.len()));
        }
        if format == OutputFormat::OldBsd && hz != DEFAULT_HZ {
            return Err(ProfileWriteError::RateNotRepresentable(hz));
        }
        let (low, high, bins): (u64, u64, &[u64]) = match self.histograms.first() {
            Some(h) => (h.low_pc, h.high_pc, &h.bins),
            None => (0, 0, &[]),
        };
        let nbins = u32::try_from(bins.len())
            .ok()
            .filter(|&n| u64::from(n) * 2 <= i32::MAX as u64 - 64)
            .ok_or(ProfileWriteError::TooManyBins(bins.len()))?;
        if format == OutputFormat::Bsd44 {
            w.bsd44_header(low, high, nbins, hz)?;
        } else {
            w.oldbsd_header(low, high, nbins)?;
        }
        report.histogram_records = u64::from(!self.histograms.is_empty());
        report.clipped_samples = bins
            .iter()
            .map(|&b| b.saturating_sub(u64::from(u16::MAX)))
            .sum();
        w.bsd_bins(
            nbins,
            bins.iter().map(|&b| b.min(u64::from(u16::MAX)) as u16),
        )?;
        let max_count = w.target().ptr_size.max_address();
        for a in &self.arcs {
            let mut left = a.count;
            let mut first = true;
            while first || left > 0 {
                let c = left.min(max_count);
                w.bsd_arc(a.from_pc, a.self_pc, c)?;
                report.arc_records += 1;
                if !first {
                    report.extra_arc_records += 1;
                }
                left -= c;
                first = false;
            }
        }
        Ok(())
    }

    /// Write the profile in `format` through `w`.
    pub fn write<S: Sink>(
        &self,
        w: &mut Writer<S>,
        format: OutputFormat,
    ) -> Result<WriteReport, ProfileWriteError<S::Error>> {
        let mut report = WriteReport::default();
        let hz = self.effective_hz();
        let counter_max = match format {
            OutputFormat::Gnu => u64::from(u32::MAX),
            OutputFormat::Bsd44 | OutputFormat::OldBsd => w.target().ptr_size.max_address(),
        };
        if let Some(a) = self
            .arcs
            .iter()
            .find(|a| a.count.div_ceil(counter_max) > MAX_ARC_PIECES)
        {
            return Err(ProfileWriteError::CountTooLarge {
                from_pc: a.from_pc,
                self_pc: a.self_pc,
                count: a.count,
            });
        }
        match format {
            OutputFormat::Gnu => {
                w.gnu_header()?;
                for h in &self.histograms {
                    let hist_size = u32::try_from(h.bins.len())
                        .map_err(|_| ProfileWriteError::TooManyBins(h.bins.len()))?;
                    let max = h.bins.iter().copied().max().unwrap_or(0);
                    let layers = max.div_ceil(u64::from(u16::MAX)).max(1);
                    for layer in 0..layers {
                        let header = HistHeader {
                            low_pc: h.low_pc,
                            high_pc: h.high_pc,
                            hist_size,
                            prof_rate: hz,
                            dimension: self.dimension,
                        };
                        // Layer k carries min(65535, what is left after k full layers).
                        let bins = h.bins.iter().map(move |&b| {
                            let done = layer * u64::from(u16::MAX);
                            b.saturating_sub(done).min(u64::from(u16::MAX)) as u16
                        });
                        w.gnu_histogram(&header, bins)?;
                        report.histogram_records += 1;
                    }
                    report.extra_histogram_records += layers - 1;
                }
                for a in &self.arcs {
                    let mut left = a.count;
                    let mut first = true;
                    while first || left > 0 {
                        let c = left.min(u64::from(u32::MAX));
                        w.gnu_arc(a.from_pc, a.self_pc, c as u32)?;
                        report.arc_records += 1;
                        if !first {
                            report.extra_arc_records += 1;
                        }
                        left -= c;
                        first = false;
                    }
                }
                if !self.basic_blocks.is_empty() {
                    let n = u32::try_from(self.basic_blocks.len())
                        .map_err(|_| ProfileWriteError::TooManyBins(self.basic_blocks.len()))?;
                    w.gnu_basic_blocks(n, self.basic_blocks.iter().copied())?;
                }
            }
            OutputFormat::Bsd44 | OutputFormat::OldBsd => {
                // gprof decides the format from the bytes: the file must not start with the
                // GNU magic, and an old BSD file must not carry the 4.4BSD version word where
                // gprof probes for it, nor be shorter than gprof's first reads.
                let t = w.target();
                let p = t.ptr_size.bytes();
                let low = self.histograms.first().map_or(0, |h| h.low_pc);
                let mut head = [0u8; 8];
                // A low_pc too wide for the target is refused by the writer below.
                let encoded = crate::cursor::Cursor::new(&mut head[..], t)
                    .put_ptr(low, "lpc")
                    .is_ok();
                if encoded && head[..4] == *layout::GNU_MAGIC {
                    return Err(ProfileWriteError::Ambiguous(
                        "its low_pc reads as the GNU magic \"gmon\"",
                    ));
                }
                let mut buf = Vec::new();
                self.write_bsd(&mut Writer::new(&mut buf, t), format, hz, &mut report)
                    .map_err(retarget)?;
                if format == OutputFormat::OldBsd {
                    let min_len = (2 * p + 8).max(layout::GNU_HEADER_BYTES);
                    if buf.len() < min_len {
                        // Shorter than gprof's first reads: pad with zeros, fewer than one arc,
                        // which gprof ignores.
                        buf.resize(min_len, 0);
                    }
                    let w4 = &buf[2 * p + 4..2 * p + 8];
                    if t.endian.read_u32(w4) == layout::BSD44_VERSION {
                        return Err(ProfileWriteError::Ambiguous(
                            "its first bins read as the 4.4BSD version word",
                        ));
                    }
                }
                w.write_raw(&buf)?;
            }
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::Writer;
    use crate::{parse, Endian, PtrSize, Target};
    use alloc::string::ToString;
    use alloc::vec;

    fn gnu(t: Target, hists: &[(u64, u64, &[u16], u32)], arcs: &[(u64, u64, u32)]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out, t);
        w.gnu_header().unwrap();
        for &(lo, hi, b, rate) in hists {
            let hh = HistHeader {
                low_pc: lo,
                high_pc: hi,
                hist_size: b.len() as u32,
                prof_rate: rate,
                dimension: Dimension::SECONDS,
            };
            w.gnu_histogram(&hh, b.iter().copied()).unwrap();
        }
        for &(f, s, c) in arcs {
            w.gnu_arc(f, s, c).unwrap();
        }
        out
    }

    const T: Target = Target::new(PtrSize::Eight, Endian::Little);

    #[test]
    fn identical_ranges_sum_and_arcs_sum() {
        let a = gnu(
            T,
            &[(0x1000, 0x1010, &[1, 2, 3, 4], 100)],
            &[(0x1002, 0x1008, 5), (0x1004, 0x1008, 1)],
        );
        let b = gnu(
            T,
            &[(0x1000, 0x1010, &[10, 0, 30, 0], 100)],
            &[(0x1002, 0x1008, 7)],
        );
        let mut p = Profile::new();
        p.add(&parse(&a, T).unwrap()).unwrap();
        p.add(&parse(&b, T).unwrap()).unwrap();
        assert_eq!(p.histograms.len(), 1);
        assert_eq!(p.histograms[0].bins, vec![11, 2, 33, 4]);
        assert_eq!(
            p.arcs,
            vec![
                ArcSum {
                    from_pc: 0x1002,
                    self_pc: 0x1008,
                    count: 12
                },
                ArcSum {
                    from_pc: 0x1004,
                    self_pc: 0x1008,
                    count: 1
                }
            ]
        );
        assert_eq!(p.total_samples(), 50);
    }

    #[test]
    fn disjoint_ranges_are_kept_and_overlaps_rejected() {
        let a = gnu(T, &[(0x1000, 0x1010, &[1, 2, 3, 4], 100)], &[]);
        let b = gnu(T, &[(0x2000, 0x2008, &[5, 6], 100)], &[]);
        let c = gnu(T, &[(0x1008, 0x1018, &[5, 6, 7, 8], 100)], &[]);
        let mut p = Profile::new();
        p.add(&parse(&a, T).unwrap()).unwrap();
        p.add(&parse(&b, T).unwrap()).unwrap();
        assert_eq!(p.histograms.len(), 2);
        let before = p.clone();
        let e = p.add(&parse(&c, T).unwrap()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "overlapping histogram records: [0x1008, 0x1018) overlaps [0x1000, 0x1010) at byte 20"
        );
        assert_eq!(p, before, "a failed add leaves the profile unchanged");
    }

    #[test]
    fn scale_and_dimension_must_match() {
        let a = gnu(T, &[(0x1000, 0x1010, &[1, 2, 3, 4], 100)], &[]);
        let b = gnu(T, &[(0x2000, 0x2010, &[1, 2], 100)], &[]);
        let mut p = Profile::from_file(&parse(&a, T).unwrap()).unwrap();
        let e = p.add(&parse(&b, T).unwrap()).unwrap_err();
        assert!(matches!(e.kind, MergeErrorKind::ScaleChanged { .. }), "{e}");
        // Different rate on a later GNU record is accepted (gprof does not check it).
        let c = gnu(T, &[(0x2000, 0x2010, &[1, 2, 3, 4], 1000)], &[]);
        p.add(&parse(&c, T).unwrap()).unwrap();
        assert_eq!(p.hz, Some(100));
        let mut d = gnu(T, &[(0x3000, 0x3010, &[1, 2, 3, 4], 100)], &[]);
        d[20 + 1 + 8 + 8 + 4 + 4] = b'm'; // "meconds"
        let e = p.add(&parse(&d, T).unwrap()).unwrap_err();
        assert!(
            matches!(e.kind, MergeErrorKind::DimensionChanged { .. }),
            "{e}"
        );
    }

    #[test]
    fn bsd_rules() {
        let bsd = |rate: Option<u32>, lo: u64, bins: &[u16]| {
            let mut out = Vec::new();
            let mut w = Writer::new(&mut out, T);
            let n = bins.len() as u32;
            match rate {
                Some(r) => w.bsd44_header(lo, lo + 4 * u64::from(n), n, r).unwrap(),
                None => w.oldbsd_header(lo, lo + 4 * u64::from(n), n).unwrap(),
            }
            w.bsd_bins(n, bins.iter().copied()).unwrap();
            out
        };
        let a = bsd(Some(1000), 0x1000, &[1, 2]);
        let mut p = Profile::from_file(&parse(&a, T).unwrap()).unwrap();
        assert_eq!(p.hz, Some(1000));
        let e = p
            .add(&parse(&bsd(Some(100), 0x1000, &[1, 2]), T).unwrap())
            .unwrap_err();
        assert_eq!(
            e.kind,
            MergeErrorKind::RateMismatch {
                first: 1000,
                new: 100
            }
        );
        let e = p
            .add(&parse(&bsd(Some(1000), 0x1004, &[1, 2]), T).unwrap())
            .unwrap_err();
        assert!(matches!(e.kind, MergeErrorKind::IncompatibleBsd { .. }));
        assert!(
            e.to_string()
                .starts_with("incompatible with first gmon file"),
            "{e}"
        );
        p.add(&parse(&bsd(None, 0x1000, &[5, 5]), T).unwrap())
            .unwrap();
        assert_eq!(p.histograms[0].bins, vec![6, 7]);
        // Old BSD first: the rate becomes gprof's hertz() = 100.
        let q = Profile::from_file(&parse(&bsd(None, 0x1000, &[5, 5]), T).unwrap()).unwrap();
        assert_eq!(q.hz, Some(DEFAULT_HZ));
    }

    #[test]
    fn bsd_output_is_always_detectable_by_gprof() {
        for t in [T, Target::new(PtrSize::Four, Endian::Big)] {
            // An empty profile in old BSD is padded to gprof's minimum and reads back.
            let mut out = Vec::new();
            Profile::new()
                .write(&mut Writer::new(&mut out, t), OutputFormat::OldBsd)
                .unwrap();
            assert_eq!(out.len(), (2 * t.ptr_size.bytes() + 8).max(20), "{t}");
            let f = parse(&out, t).unwrap();
            assert_eq!(f.format(), Format::OldBsd);
            assert!(f.arcs.is_empty());
            // Bins that spell the 4.4BSD version word where gprof probes: refused.
            let mut p = Profile::new();
            let [b0, b1] = match t.endian {
                Endian::Little => [0x1879, 0x0005],
                Endian::Big => [0x0005, 0x1879],
            };
            p.histograms.push(HistogramSum {
                low_pc: 0,
                high_pc: 12,
                bins: vec![b0, b1, 0],
                first_offset: 0,
            });
            let e = p
                .write(&mut Writer::new(Vec::new(), t), OutputFormat::OldBsd)
                .unwrap_err();
            assert!(matches!(e, ProfileWriteError::Ambiguous(_)), "{e:?}");
            p.write(&mut Writer::new(Vec::new(), t), OutputFormat::Bsd44)
                .unwrap();
            // A low_pc whose bytes spell "gmon": refused in both BSD formats.
            let low = match t.ptr_size {
                PtrSize::Eight => u64::from_le_bytes(*b"gmon\0\0\0\0"),
                PtrSize::Four => u64::from(t.endian.read_u32(b"gmon")),
            };
            p.histograms[0] = HistogramSum {
                low_pc: low,
                high_pc: low + 12,
                bins: vec![1, 2, 3],
                first_offset: 0,
            };
            for format in [OutputFormat::Bsd44, OutputFormat::OldBsd] {
                let e = p.write(&mut Writer::new(Vec::new(), t), format);
                assert!(
                    matches!(e, Err(ProfileWriteError::Ambiguous(_))),
                    "{t} {e:?}"
                );
            }
            p.write(&mut Writer::new(Vec::new(), t), OutputFormat::Gnu)
                .unwrap();
        }
    }

    #[test]
    fn huge_arc_counts_are_refused_not_written_as_gigabytes() {
        // Found by the fuzzer: a 64-bit BSD arc of 2^62 calls would need 2^30 GNU records.
        let mut p = Profile::new();
        p.add_arc(1, 2, 1 << 62);
        let mut out = Vec::new();
        let e = p
            .write(&mut Writer::new(&mut out, T), OutputFormat::Gnu)
            .unwrap_err();
        assert_eq!(
            e,
            ProfileWriteError::CountTooLarge {
                from_pc: 1,
                self_pc: 2,
                count: 1 << 62
            }
        );
        assert!(out.is_empty(), "nothing written");
        // 64-bit BSD carries it in one arc; the largest count GNU accepts splits into 1024.
        p.write(&mut Writer::new(&mut out, T), OutputFormat::Bsd44)
            .unwrap();
        let mut q = Profile::new();
        q.add_arc(1, 2, MAX_ARC_PIECES * u64::from(u32::MAX));
        let r = q
            .write(&mut Writer::new(Vec::new(), T), OutputFormat::Gnu)
            .unwrap();
        assert_eq!(r.arc_records, MAX_ARC_PIECES);
    }

    #[test]
    fn wide_bins_split_into_layers_for_gnu_and_clip_for_bsd() {
        let a = gnu(
            T,
            &[(0x1000, 0x100c, &[65535, 1, 65535], 100)],
            &[(1, 2, u32::MAX)],
        );
        let mut p = Profile::new();
        for _ in 0..3 {
            p.add(&parse(&a, T).unwrap()).unwrap();
        }
        assert_eq!(p.histograms[0].bins, vec![3 * 65535, 3, 3 * 65535]);
        assert_eq!(p.arcs[0].count, 3 * u64::from(u32::MAX));

        let mut out = Vec::new();
        let r = p
            .write(&mut Writer::new(&mut out, T), OutputFormat::Gnu)
            .unwrap();
        assert_eq!(r.histogram_records, 3);
        assert_eq!(r.extra_histogram_records, 2);
        assert_eq!(r.arc_records, 3);
        let back = Profile::from_file(&parse(&out, T).unwrap()).unwrap();
        assert_eq!(
            back.histograms,
            p.histograms
                .iter()
                .map(|h| HistogramSum {
                    first_offset: 20,
                    ..h.clone()
                })
                .collect::<Vec<_>>()
        );
        assert_eq!(back.arcs, p.arcs);

        let mut out = Vec::new();
        let r = p
            .write(&mut Writer::new(&mut out, T), OutputFormat::Bsd44)
            .unwrap();
        assert_eq!(r.clipped_samples, 4 * 65535);
        let f = parse(&out, T).unwrap();
        assert_eq!(
            f.histograms[0].bins.iter().collect::<Vec<_>>(),
            vec![65535, 3, 65535]
        );
        assert_eq!(
            f.arcs[0].count,
            3 * u64::from(u32::MAX),
            "64-bit BSD arcs carry the full count"
        );
    }

    #[test]
    fn bsd_output_needs_one_histogram_and_oldbsd_needs_default_rate() {
        let a = gnu(
            T,
            &[
                (0x1000, 0x1010, &[1, 2, 3, 4], 100),
                (0x2000, 0x2010, &[1, 2, 3, 4], 100),
            ],
            &[],
        );
        let p = Profile::from_file(&parse(&a, T).unwrap()).unwrap();
        let e = p
            .write(&mut Writer::new(Vec::new(), T), OutputFormat::Bsd44)
            .unwrap_err();
        assert_eq!(e, ProfileWriteError::TooManyHistograms(2));
        let b = gnu(T, &[(0x1000, 0x1010, &[1, 2, 3, 4], 1000)], &[]);
        let p = Profile::from_file(&parse(&b, T).unwrap()).unwrap();
        let e = p
            .write(&mut Writer::new(Vec::new(), T), OutputFormat::OldBsd)
            .unwrap_err();
        assert_eq!(e, ProfileWriteError::RateNotRepresentable(1000));
        p.write(&mut Writer::new(Vec::new(), T), OutputFormat::Bsd44)
            .unwrap();
    }
}
