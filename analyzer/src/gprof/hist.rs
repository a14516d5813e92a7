//! Histogram records as gprof 2.40 accumulates them over several files (`hist_read_rec`,
//! the BSD branch of `gmon_out_read`) and assigns them to symbols (`hist_assign_samples`).

use super::debug::{self, Trace};
use super::symspec::{SpecTables, Table};
use super::symtab::SymTab;

/// One accumulated histogram range.
#[derive(Debug, Clone)]
pub struct HistRange {
    /// Link-time address of bin 0.
    pub low_pc: u64,
    /// End of the range (exclusive).
    pub high_pc: u64,
    /// Summed bins: gprof's `int` accumulator, kept as the `unsigned int` it is read back as
    /// (sums wrap at 2^32, as the C int does in practice).
    pub samples: Vec<u32>,
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
        let samples = &mut self.ranges[idx].samples;
        // One loop per byte order, without index checks, so that it vectorizes.
        let pairs = samples.iter_mut().zip(rec.bins.chunks_exact(2));
        if rec.big_endian {
            for (s, b) in pairs {
                *s = s.wrapping_add(u32::from(u16::from_be_bytes([b[0], b[1]])));
            }
        } else {
            for (s, b) in pairs {
                *s = s.wrapping_add(u32::from(u16::from_le_bytes([b[0], b[1]])));
            }
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
    assign(symtab, hist, excluded, None, None)
}

/// `hist_read_rec`'s `SAMPLEDEBUG` trace after the record `[low, high)` was added: its header
/// and every bin's accumulated count, at gprof's (integer) bin addresses.
pub fn trace_record(hist: &Histograms, low: u64, high: u64, trace: &mut Trace) {
    let Some(r) = hist
        .ranges
        .iter()
        .find(|r| r.low_pc == low && r.high_pc == high)
    else {
        return;
    };
    let n = r.samples.len() as u64;
    trace.fmt(format_args!(
        "[hist_read_rec] n_lowpc 0x{low:x} n_highpc 0x{high:x} ncnt {n}\n"
    ));
    let span = high.wrapping_sub(low);
    for (i, &v) in r.samples.iter().enumerate() {
        let at = low.wrapping_add((i as u64).wrapping_mul(span) / n);
        trace.fmt(format_args!("[hist_read_rec] 0x{at:x}: {v}\n"));
    }
}

/// [`assign_samples`] with gprof's `SAMPLEDEBUG` traces: each non-empty bin, each credit,
/// and the running total after each histogram; and after each credit the `LOOKUPDEBUG`
/// traces of its look-ups in the flat profile's spec `tables`.
pub fn assign_samples_traced(
    symtab: &SymTab<'_>,
    hist: &Histograms,
    excluded: &[bool],
    tables: Option<&SpecTables<'_>>,
    trace: &mut Trace,
) -> Assigned {
    assign(symtab, hist, excluded, Some(trace), tables)
}

/// Both: the traces cost a test per non-empty bin and per credit when `trace` is `None`.
/// `tables`: the spec tables to look each credited symbol up in (traced).
fn assign(
    symtab: &SymTab<'_>,
    hist: &Histograms,
    excluded: &[bool],
    mut trace: Option<&mut Trace>,
    tables: Option<&SpecTables<'_>>,
) -> Assigned {
    let samples = trace.as_ref().is_some_and(|t| t.on(debug::SAMPLEDEBUG));
    let syms = &symtab.syms;
    let n = syms.len();
    let mut time = vec![0.0f64; n];
    let mut total_time = 0.0f64;
    let scaled: Vec<u64> = syms.iter().map(|s| s.addr / 2).collect();
    let scale = hist.scale;
    for r in &hist.ranges {
        let lowpc = r.low_pc / 2;
        let mut k: usize = 1;
        // The C accumulator is an `int`, read back as `unsigned int`.
        for (i, &count) in r.samples.iter().enumerate() {
            if count == 0 {
                continue;
            }
            // C: (bfd_vma) (hist_scale * i), with i an unsigned int.
            let bin_lo = lowpc.wrapping_add((scale * (i as u32) as f64) as u64);
            let bin_hi = lowpc.wrapping_add((scale * (i as u32).wrapping_add(1) as f64) as u64);
            let count_time = f64::from(count);
            if let Some(trace) = trace.as_deref_mut().filter(|_| samples) {
                trace.fmt(format_args!(
                    "[assign_samples] bin_low_pc=0x{:x}, bin_high_pc=0x{:x}, bin_count={count}\n",
                    bin_lo.wrapping_mul(2),
                    bin_hi.wrapping_mul(2)
                ));
            }
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
                        if let Some(trace) = trace.as_deref_mut().filter(|_| samples) {
                            trace.fmt(format_args!(
                                "[assign_samples] [0x{:x},0x{:x}) ",
                                syms[j].addr,
                                s_hi.wrapping_mul(2)
                            ));
                            trace.put(syms[j].name);
                            trace.fmt(format_args!(
                                " gets {} ticks {} overlap\n",
                                debug::f6(credit),
                                overlap as i64
                            ));
                        }
                        if let (Some(t), Some(trace)) = (tables, trace.as_deref_mut()) {
                            t.on(Table::InclFlat, Table::ExclFlat, syms[j].addr, trace);
                        }
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
        if let Some(trace) = trace.as_deref_mut().filter(|_| samples) {
            trace.fmt(format_args!(
                "[assign_samples] total_time {}\n",
                debug::f6(total_time)
            ));
        }
    }
    Assigned { time, total_time }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gprof::symtab::Sym;

    fn sym(name: &'static str, addr: u64, end: u64) -> Sym<'static> {
        Sym {
            name: name.as_bytes(),
            addr,
            end_addr: end,
            is_func: true,
            is_static: false,
            mapped: false,
        }
    }

    fn hist(low: u64, high: u64, bins: &[u16]) -> Histograms {
        let bytes: Vec<u8> = bins.iter().flat_map(|b| b.to_le_bytes()).collect();
        let mut h = Histograms::default();
        let input = HistInput {
            low_pc: low,
            high_pc: high,
            bins: &bytes,
            num_bins: bins.len() as u32,
            prof_rate: 100,
            dimension: b"seconds",
            abbrev: b's',
            big_endian: false,
        };
        h.add_gnu(&input).unwrap();
        h
    }

    #[test]
    fn bins_are_read_in_the_target_byte_order_and_summed() {
        let bins: [u16; 5] = [1, 0x0100, 0xffff, 0x1234, 0];
        for big_endian in [false, true] {
            let bytes: Vec<u8> = bins
                .iter()
                .flat_map(|b| {
                    if big_endian {
                        b.to_be_bytes()
                    } else {
                        b.to_le_bytes()
                    }
                })
                .collect();
            let input = HistInput {
                low_pc: 0x100,
                high_pc: 0x100 + 4 * bins.len() as u64,
                bins: &bytes,
                num_bins: bins.len() as u32,
                prof_rate: 100,
                dimension: b"seconds",
                abbrev: b's',
                big_endian,
            };
            let mut h = Histograms::default();
            h.add_gnu(&input).unwrap();
            h.add_gnu(&input).unwrap();
            assert_eq!(
                h.ranges[0].samples,
                [2, 0x200, 0x1fffe, 0x2468, 0],
                "{big_endian}"
            );
        }
    }

    #[test]
    fn four_byte_bins_credit_exactly_and_the_last_symbol_gets_nothing() {
        let t = SymTab {
            syms: vec![
                sym("a", 0x10, 0x17),
                sym("b", 0x18, 0x1f),
                sym("last", 0x20, 0x2f),
            ],
            after_last: None,
        };
        // Bins of 4 bytes from 0x08: [0x08,0x0c) below every symbol, then a, a, b, b, last.
        let h = hist(0x08, 0x24, &[5, 0, 1, 2, 3, 4, 9]);
        assert_eq!(h.scale, 2.0);
        let r = assign_samples(&t, &h, &[false; 3]);
        assert_eq!(r.time, [3.0, 7.0, 0.0]);
        assert_eq!(r.total_time, 24.0);
        // Excluded symbols are neither credited nor counted.
        let r = assign_samples(&t, &h, &[false, true, false]);
        assert_eq!(r.time, [3.0, 0.0, 0.0]);
        assert_eq!(r.total_time, 17.0);
    }

    #[test]
    fn uneven_bins_are_credited_in_two_byte_units() {
        // 3 bins over 12 bytes of 2-byte units, but hist_scale = 6/4 = 1.5 with 4 bins.
        let t = SymTab {
            syms: vec![sym("a", 0x0, 0x5), sym("b", 0x6, 0xb), sym("end", 0xc, 0xc)],
            after_last: None,
        };
        let h = hist(0x0, 0xc, &[2, 2, 2, 2]);
        assert_eq!(h.scale, 1.5);
        let r = assign_samples(&t, &h, &[false; 3]);
        // Bins cover units [0,1) [1,3) [3,4) [4,6); a = units 0..3, b = 3..6.
        // a: 1·2/1.5 + 2·2/1.5 = 4; b: 1·2/1.5 + 2·2/1.5 = 4. Credits sum to 8 = 4 bins × 2.
        assert!(
            (r.time[0] - 4.0).abs() < 1e-12 && (r.time[1] - 4.0).abs() < 1e-12,
            "{:?}",
            r.time
        );
    }

    #[test]
    fn repeated_ranges_sum_and_overlaps_are_refused() {
        let mut h = hist(0x0, 0x10, &[1, 2, 3, 4]);
        let bytes: Vec<u8> = [1u16, 1, 1, 1]
            .iter()
            .flat_map(|b| b.to_le_bytes())
            .collect();
        let mut input = HistInput {
            low_pc: 0,
            high_pc: 0x10,
            bins: &bytes,
            num_bins: 4,
            prof_rate: 60,
            dimension: b"seconds",
            abbrev: b's',
            big_endian: false,
        };
        h.add_gnu(&input).unwrap();
        assert_eq!(h.ranges[0].samples, [2, 3, 4, 5]);
        assert_eq!(h.hz, 100, "the first record's rate wins");
        input.low_pc = 0x8;
        input.high_pc = 0x18;
        assert_eq!(
            h.add_gnu(&input).unwrap_err(),
            "overlapping histogram records"
        );
        input.low_pc = 0x100;
        input.high_pc = 0x120;
        assert_eq!(
            h.add_gnu(&input).unwrap_err(),
            "different scales in histogram records"
        );
    }
}
