//! Histogram records as gprof 2.40 accumulates them over several files (`hist_read_rec`,
//! the BSD branch of `gmon_out_read`) and assigns them to symbols (`hist_assign_samples`).

use super::symtab::SymTab;

/// One accumulated histogram range.
#[derive(Debug, Clone)]
pub struct HistRange {
    /// Link-time address of bin 0.
    pub low_pc: u64,
    /// End of the range (exclusive).
    pub high_pc: u64,
    /// Summed bins (`int` in gprof).
    pub samples: Vec<i64>,
}

/// Everything gprof learns from histogram records.
#[derive(Debug, Clone)]
pub struct Histograms {
    /// Ranges in the order they first appeared.
    pub ranges: Vec<HistRange>,
    /// Samples per second (`hz`): the first record's rate; 0 until known.
    pub hz: u32,
    /// Unit name (up to the first NUL of the 15-byte field).
    pub dimension: Vec<u8>,
    /// Unit abbreviation (`s`).
    pub abbrev: u8,
    /// `hist_scale`: 2-byte units per bin, from the first record.
    pub scale: f64,
}

impl Default for Histograms {
    fn default() -> Self {
        Histograms {
            ranges: Vec::new(),
            hz: 0,
            dimension: b"seconds".to_vec(),
            abbrev: b's',
            scale: 0.0,
        }
    }
}

/// A histogram record as read from one file.
#[derive(Debug, Clone, Copy)]
pub struct HistInput<'a> {
    /// Link-time address of bin 0.
    pub low_pc: u64,
    /// End of the range (exclusive).
    pub high_pc: u64,
    /// Bins as raw bytes (u16 each, in `big_endian` order).
    pub bins: &'a [u8],
    /// Number of bins in the record header.
    pub num_bins: u32,
    /// GNU `prof_rate` (ignored for BSD files; see [`Histograms::add_bsd`]).
    pub prof_rate: u32,
    /// Dimension name up to its first NUL.
    pub dimension: &'a [u8],
    /// Dimension abbreviation.
    pub abbrev: u8,
    /// Byte order of the bins.
    pub big_endian: bool,
}

fn bin(bins: &[u8], i: usize, big_endian: bool) -> i64 {
    let b = [bins[2 * i], bins[2 * i + 1]];
    i64::from(if big_endian {
        u16::from_be_bytes(b)
    } else {
        u16::from_le_bytes(b)
    })
}

fn scale_of(low: u64, high: u64, num_bins: u32) -> f64 {
    (high.wrapping_sub(low) / 2) as f64 / f64::from(num_bins)
}

impl Histograms {
    /// A GNU tag-0 record (`hist_read_rec`). Errors are gprof's fatal conditions.
    pub fn add_gnu(&mut self, rec: &HistInput<'_>) -> Result<(), String> {
        let new_scale = scale_of(rec.low_pc, rec.high_pc, rec.num_bins);
        if self.ranges.is_empty() {
            self.hz = rec.prof_rate;
            self.dimension = rec.dimension.to_vec();
            self.abbrev = rec.abbrev;
            self.scale = new_scale;
        } else {
            if rec.dimension != self.dimension.as_slice() {
                return Err("dimension unit changed between histogram records".into());
            }
            if rec.abbrev != self.abbrev {
                return Err("dimension abbreviation changed between histogram records".into());
            }
            if (self.scale - new_scale).abs() > 0.000001 {
                return Err("different scales in histogram records".into());
            }
        }
        let idx = match self
            .ranges
            .iter()
            .position(|r| r.low_pc == rec.low_pc && r.high_pc == rec.high_pc)
        {
            Some(i) => {
                if self.ranges[i].samples.len() != rec.num_bins as usize {
                    return Err(format!(
                        "histogram record repeats range {:#x}-{:#x} with {} bins instead of {} \
                         (gprof would misread the rest of the file)",
                        rec.low_pc,
                        rec.high_pc,
                        rec.num_bins,
                        self.ranges[i].samples.len()
                    ));
                }
                i
            }
            None => {
                if self
                    .ranges
                    .iter()
                    .any(|h| rec.low_pc < h.high_pc && h.low_pc < rec.high_pc)
                {
                    return Err("overlapping histogram records".into());
                }
                self.ranges.push(HistRange {
                    low_pc: rec.low_pc,
                    high_pc: rec.high_pc,
                    samples: vec![0; rec.num_bins as usize],
                });
                self.ranges.len() - 1
            }
        };
        self.add_bins(idx, rec);
        Ok(())
    }

    /// The histogram of a 4.4BSD (`rate = Some`) or old BSD (`None`) file.
    pub fn add_bsd(&mut self, rec: &HistInput<'_>, rate: Option<u32>) -> Result<(), String> {
        if let Some(rate) = rate {
            if self.hz == 0 {
                self.hz = rate;
            } else if self.hz != rate {
                return Err("profiling rate incompatible with first gmon file".into());
            }
        }
        if self.ranges.is_empty() {
            self.scale = scale_of(rec.low_pc, rec.high_pc, rec.num_bins);
            self.ranges.push(HistRange {
                low_pc: rec.low_pc,
                high_pc: rec.high_pc,
                samples: vec![0; rec.num_bins as usize],
            });
        } else {
            let first = &self.ranges[0];
            if rec.low_pc != first.low_pc
                || rec.high_pc != first.high_pc
                || rec.num_bins as usize != first.samples.len()
            {
                return Err("incompatible with first gmon file".into());
            }
        }
        self.add_bins(0, rec);
        Ok(())
    }

    fn add_bins(&mut self, idx: usize, rec: &HistInput<'_>) {
        let range = &mut self.ranges[idx];
        let n = range.samples.len().min(rec.bins.len() / 2);
        for (i, s) in range.samples.iter_mut().enumerate().take(n) {
            *s += bin(rec.bins, i, rec.big_endian);
        }
    }

    /// gprof's end-of-file fix-up: without a rate, `hz` is the clock tick rate (100 on Linux).
    pub fn end_of_file(&mut self) {
        if self.hz == 0 {
            self.hz = 100;
        }
    }

    /// True once any histogram record was read.
    pub fn present(&self) -> bool {
        !self.ranges.is_empty()
    }
}

/// Result of `hist_assign_samples`.
#[derive(Debug, Clone)]
pub struct Assigned {
    /// Credit per symbol (`hist.time`, in samples).
    pub time: Vec<f64>,
    /// `total_time`: all samples, minus the credits of excluded symbols.
    pub total_time: f64,
}

/// `hist_assign_samples`: credit each bin to the symbols it overlaps, in 2-byte units,
/// with gprof's truncations. `excluded[i]` marks symbols whose credit is dropped and taken
/// out of the total (`mcount` and friends). The last symbol never receives samples.
pub fn assign_samples(symtab: &SymTab<'_>, hist: &Histograms, excluded: &[bool]) -> Assigned {
    let syms = &symtab.syms;
    let n = syms.len();
    let mut time = vec![0.0f64; n];
    let mut total_time = 0.0f64;
    let scaled: Vec<u64> = syms.iter().map(|s| s.addr / 2).collect();
    let scale = hist.scale;
    for r in &hist.ranges {
        let lowpc = r.low_pc / 2;
        let mut k: usize = 1;
        for (i, &sum) in r.samples.iter().enumerate() {
            // The C accumulator is an `int`, read back as `unsigned int`.
            let count = sum as u32;
            if count == 0 {
                continue;
            }
            // C: (bfd_vma) (hist_scale * i), with i an unsigned int.
            let bin_lo = lowpc.wrapping_add((scale * (i as u32) as f64) as u64);
            let bin_hi = lowpc.wrapping_add((scale * (i as u32).wrapping_add(1) as f64) as u64);
            let count_time = f64::from(count);
            total_time += count_time;
            let mut j = k - 1;
            while j < n {
                let s_lo = scaled[j];
                // Reading one past the end: a stale entry with scaled_addr 0.
                let s_hi = if j + 1 < n { scaled[j + 1] } else { 0 };
                if bin_hi < s_lo {
                    break;
                }
                if bin_lo < s_hi {
                    let overlap = bin_hi.min(s_hi).wrapping_sub(bin_lo.max(s_lo));
                    if overlap > 0 {
                        let credit = overlap as f64 * count_time / scale;
                        if excluded[j] {
                            total_time -= credit;
                        } else {
                            time[j] += credit;
                        }
                    }
                }
                j += 1;
                k = j;
            }
        }
    }
    Assigned { time, total_time }
}
