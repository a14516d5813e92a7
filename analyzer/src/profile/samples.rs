//! The samples of a profile: every gmon file's histograms summed per address range, the call
//! arcs, and the one model of a histogram bin that every report splits between functions,
//! lines or objects.
//!
//! This is the profile model's own reading, on the `gmon` crate, so that the reports other
//! than `--gprof` do not read through the gprof emulation (whose rules follow gprof bug for
//! bug and may change with it). The summing rules are the ones any reader must apply to add
//! histograms up, and they are gprof's: histograms of the same range are summed bin by bin;
//! the first record sets the rate, the unit and the bin width (2-byte units per bin), and a
//! later record that disagrees, or overlaps another range without matching it, is an error
//! naming the file and the record. Unlike gprof's `int` accumulator, the sums do not wrap.
//!
//! # Bins
//!
//! A histogram of `n` bins over `[low, high)` gives bin `i` the addresses
//! `[low + i·(high−low)/n, low + (i+1)·(high−low)/n)`. [`Bin`] keeps that exactly, in units of
//! `1/n` byte (`u128`), so a bin that straddles two functions (or a function and code outside
//! every function) is split by the exact byte overlap ([`Bin::share`]) and the shares of a
//! bin always sum to its count.

use gmon::read::Record;
use gmon::Target;

use super::input::Inputs;
use crate::{Error, Result};

/// One address range of summed histogram bins.
#[derive(Debug, Clone)]
pub struct Range {
    /// Link-time address of bin 0.
    pub low_pc: u64,
    /// End of the range (exclusive).
    pub high_pc: u64,
    /// Summed bins.
    pub bins: Vec<u64>,
}

/// A call arc as recorded: caller address, callee address, count (link-time addresses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arc {
    /// Address in the caller (the call site).
    pub from: u64,
    /// Address of the callee (its entry).
    pub to: u64,
    /// Calls.
    pub count: u64,
}

/// The summed samples and arcs of a profile's gmon files.
#[derive(Debug, Clone)]
pub struct Samples {
    /// Ranges in the order they first appeared.
    pub ranges: Vec<Range>,
    /// Samples per second (100 when no file says: the clock tick rate gprof assumes).
    pub hz: u32,
    /// Every arc record, in file order (empty unless asked for).
    pub arcs: Vec<Arc>,
    dimension: Vec<u8>,
    abbrev: u8,
    scale: f64,
}

impl Default for Samples {
    fn default() -> Self {
        Samples {
            ranges: Vec::new(),
            hz: 0,
            arcs: Vec::new(),
            dimension: b"seconds".to_vec(),
            abbrev: b's',
            scale: 0.0,
        }
    }
}

/// 2-byte units of text per bin (gprof's `hist_scale`).
fn scale_of(low: u64, high: u64, bins: u32) -> f64 {
    (high.wrapping_sub(low) / 2) as f64 / f64::from(bins)
}

impl Samples {
    /// Read every gmon file of `inputs`, one at a time, decoded for `target`; keep the arcs
    /// when `arcs` is set.
    pub fn read(inputs: &Inputs, target: Target, arcs: bool) -> Result<Samples> {
        let mut s = Samples::default();
        for g in &inputs.gmons {
            s.add_file(&g.name(), &g.bytes()?, target, arcs)?;
        }
        if s.hz == 0 {
            s.hz = 100;
        }
        Ok(s)
    }

    /// [`Samples::read`] that hands each arc record to `on_arc` as it is read (in file
    /// order) instead of keeping it: summing many large profiles then holds no list of
    /// every file's arcs.
    pub fn read_with(
        inputs: &Inputs,
        target: Target,
        mut on_arc: impl FnMut(Arc),
    ) -> Result<Samples> {
        let mut s = Samples::default();
        for g in &inputs.gmons {
            s.add_file_with(&g.name(), &g.bytes()?, target, &mut on_arc)?;
        }
        if s.hz == 0 {
            s.hz = 100;
        }
        Ok(s)
    }

    /// Add one gmon file (`name` for messages).
    pub fn add_file(&mut self, name: &str, data: &[u8], target: Target, arcs: bool) -> Result<()> {
        let mut kept = Vec::new();
        let r = self.add_file_with(name, data, target, &mut |a| {
            if arcs {
                kept.push(a)
            }
        });
        self.arcs.append(&mut kept);
        r
    }

    /// Add one gmon file, handing its arc records to `on_arc`.
    fn add_file_with(
        &mut self,
        name: &str,
        data: &[u8],
        target: Target,
        on_arc: &mut dyn FnMut(Arc),
    ) -> Result<()> {
        let fail = |msg: String| Error::input(format!("{name}: {msg}"));
        let (header, records) =
            gmon::read::records(data, target).map_err(|e| fail(e.to_string()))?;
        for rec in records {
            match rec.map_err(|e| fail(e.to_string()))? {
                Record::Histogram(h) => {
                    let r = if header.format.is_gnu() {
                        self.add_gnu(&h)
                    } else {
                        self.add_bsd(&h)
                    };
                    r.map_err(|m| fail(format!("{m} (record at byte {})", h.offset)))?;
                }
                Record::Arc(a) => on_arc(Arc {
                    from: a.from_pc,
                    to: a.self_pc,
                    count: a.count,
                }),
                Record::BasicBlocks(_) => {}
            }
        }
        Ok(())
    }

    fn add_gnu(&mut self, h: &gmon::read::Histogram<'_>) -> std::result::Result<(), String> {
        let scale = scale_of(h.low_pc, h.high_pc, h.hist_size);
        let dimension = h.dimension.name_bytes();
        if self.ranges.is_empty() {
            self.hz = h.prof_rate.unwrap_or(0);
            self.dimension = dimension.to_vec();
            self.abbrev = h.dimension.abbrev;
            self.scale = scale;
        } else {
            if dimension != self.dimension.as_slice() {
                return Err("dimension unit changed between histogram records".into());
            }
            if h.dimension.abbrev != self.abbrev {
                return Err("dimension abbreviation changed between histogram records".into());
            }
            if (self.scale - scale).abs() > 0.000001 {
                return Err("different scales in histogram records".into());
            }
        }
        let idx = match self
            .ranges
            .iter()
            .position(|r| r.low_pc == h.low_pc && r.high_pc == h.high_pc)
        {
            Some(i) => {
                if self.ranges[i].bins.len() != h.hist_size as usize {
                    return Err(format!(
                        "histogram record repeats range {:#x}-{:#x} with {} bins instead of {} \
                         (gprof would misread the rest of the file)",
                        h.low_pc,
                        h.high_pc,
                        h.hist_size,
                        self.ranges[i].bins.len()
                    ));
                }
                i
            }
            None => {
                if self
                    .ranges
                    .iter()
                    .any(|r| h.low_pc < r.high_pc && r.low_pc < h.high_pc)
                {
                    return Err("overlapping histogram records".into());
                }
                self.push_range(h);
                self.ranges.len() - 1
            }
        };
        self.add_bins(idx, h);
        Ok(())
    }

    fn add_bsd(&mut self, h: &gmon::read::Histogram<'_>) -> std::result::Result<(), String> {
        if let Some(rate) = h.prof_rate {
            if self.hz == 0 {
                self.hz = rate;
            } else if self.hz != rate {
                return Err("profiling rate incompatible with first gmon file".into());
            }
        }
        if self.ranges.is_empty() {
            self.scale = scale_of(h.low_pc, h.high_pc, h.hist_size);
            self.push_range(h);
        } else {
            let first = &self.ranges[0];
            if h.low_pc != first.low_pc
                || h.high_pc != first.high_pc
                || h.hist_size as usize != first.bins.len()
            {
                return Err("incompatible with first gmon file".into());
            }
        }
        self.add_bins(0, h);
        Ok(())
    }

    fn push_range(&mut self, h: &gmon::read::Histogram<'_>) {
        self.ranges.push(Range {
            low_pc: h.low_pc,
            high_pc: h.high_pc,
            bins: vec![0; h.hist_size as usize],
        });
    }

    fn add_bins(&mut self, idx: usize, h: &gmon::read::Histogram<'_>) {
        for (s, b) in self.ranges[idx].bins.iter_mut().zip(h.bins.iter()) {
            *s += u64::from(b);
        }
    }

    /// Whether any file had a histogram record (without one there are no times, only calls).
    pub fn has_histogram(&self) -> bool {
        !self.ranges.is_empty()
    }

    /// Every bin that holds samples, range by range, in address order within a range.
    pub fn sampled_bins(&self) -> impl Iterator<Item = Bin> + '_ {
        self.ranges.iter().flat_map(Range::sampled_bins)
    }
}

impl Range {
    /// The bins of this range that hold samples, in address order.
    pub fn sampled_bins(&self) -> impl Iterator<Item = Bin> + '_ {
        let n = self.bins.len() as u128;
        let span = u128::from(self.high_pc.saturating_sub(self.low_pc));
        let low = u128::from(self.low_pc);
        let usable = n != 0 && span != 0;
        self.bins
            .iter()
            .enumerate()
            .filter(move |&(_, &c)| usable && c != 0)
            .map(move |(i, &count)| {
                let lo = low * n + i as u128 * span;
                Bin {
                    lo,
                    hi: lo + span,
                    n,
                    count,
                }
            })
    }
}

/// A sampled bin: `[lo, hi)` in units of `1/n` byte, and its count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bin {
    /// Start, in units of `1/n` byte.
    pub lo: u128,
    /// End (exclusive), in units of `1/n` byte.
    pub hi: u128,
    /// Bins in the bin's histogram: the unit is `1/n` byte.
    pub n: u128,
    /// Samples.
    pub count: u64,
}

impl Bin {
    /// The bin's bytes, rounded out to whole addresses.
    pub fn addr_range(&self) -> (u64, u64) {
        ((self.lo / self.n) as u64, self.hi.div_ceil(self.n) as u64)
    }

    /// Samples of the part `[a, z)` (units of `1/n` byte) of this bin: the count times the
    /// part's share of the bin's width (exactly the count for the whole bin).
    pub fn share(&self, a: u128, z: u128) -> f64 {
        let span = self.hi - self.lo;
        if z - a == span {
            self.count as f64
        } else {
            self.count as f64 * ((z - a) as f64 / span as f64)
        }
    }

    /// Samples of the overlap with the addresses `[start, end)`, and whether that overlap is
    /// only part of the bin.
    pub fn overlap(&self, start: u64, end: u64) -> (f64, bool) {
        let (s, e) = (u128::from(start) * self.n, u128::from(end) * self.n);
        let (a, z) = (self.lo.max(s), self.hi.min(e));
        if z <= a {
            return (0.0, false);
        }
        (self.share(a, z), z - a < self.hi - self.lo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin(lo_byte: u64, width_num: u128, n: u128, count: u64) -> Bin {
        let lo = u128::from(lo_byte) * n;
        Bin {
            lo,
            hi: lo + width_num,
            n,
            count,
        }
    }

    #[test]
    fn a_bin_split_between_two_functions_keeps_its_count() {
        // 3 bins over 10 bytes: each 10/3 bytes wide (10 units of 1/3 byte).
        let b = bin(0x100, 10, 3, 7);
        let (a, part_a) = b.overlap(0x100, 0x102);
        let (z, part_z) = b.overlap(0x102, 0x200);
        assert!(part_a && part_z);
        assert!((a + z - 7.0).abs() < 1e-12, "{a} + {z}");
        assert!((a - 7.0 * 6.0 / 10.0).abs() < 1e-12);
        assert_eq!(b.overlap(0x100, 0x200), (7.0, false));
        assert_eq!(b.overlap(0x200, 0x300), (0.0, false));
        assert_eq!(b.addr_range(), (0x100, 0x104));
    }

    #[test]
    fn ranges_sum_and_bins_come_out_in_order() {
        let mut s = Samples::default();
        s.ranges.push(Range {
            low_pc: 0x1000,
            high_pc: 0x1010,
            bins: vec![0, 2, 0, 5],
        });
        let bins: Vec<Bin> = s.sampled_bins().collect();
        assert_eq!(bins.len(), 2);
        assert_eq!(bins[0].addr_range(), (0x1004, 0x1008));
        assert_eq!(bins[1].addr_range(), (0x100c, 0x1010));
        assert_eq!(bins[0].count + bins[1].count, 7);
    }
}
