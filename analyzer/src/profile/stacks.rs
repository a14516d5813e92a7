//! The call stacks the runtime sampled (issue 17): `<profile>.stacks` beside each gmon file
//! (format: [`gmon::stacks`]), read into frames that the reports map to functions.
//!
//! * **Found by name, like the objects manifest**: for `DIR/gmon.out` the file is
//!   `DIR/gmon.out.stacks` ([`stacks_path`]); the runtime derives it from whatever profile
//!   name it wrote (`gmon.out.<pid>` → `gmon.out.<pid>.stacks`); `run` keeps the main
//!   profile's in its side folder (`gmon.out.d/gmon.out.stacks`, [`find_stacks`]). Stacks are used only when
//!   every gmon file has one (a sum of histograms over several runs with stacks for some of
//!   them would give total times that do not add up); otherwise a warning says which lacks it.
//! * **Addresses become (object, link-time address)** with the file's object records: the
//!   first record is the executable (records with its bias and path too: a second executable
//!   segment); every other object is known by its path, so the same library loaded at
//!   different addresses in two runs is one object. Return addresses point after their call,
//!   so every frame but the innermost is looked up at `address − 1` (the call instruction),
//!   which keeps a call at the very end of a function in that function.
//! * **Inclusive counts** ([`Sampled::measure`]): a function (or a caller→callee edge) counts
//!   once per sample however often it recurs on that stack, so recursion never inflates it
//!   and every total is at most the number of samples.
//! * **Bad input**: a file that does not parse is an input error naming the file, what is
//!   wrong and the byte offset (exit status 2), like a bad gmon file.
//!
//! Limit: the stacks hold runtime addresses, and an address is mapped by the first object
//! record that holds it. When the program unloads an object (`dlclose`) and the loader puts
//! another at the same addresses, both have records and the second one's frames are read as
//! the first one's (the histograms tell them apart, [`crate::report::objects`]; the stacks
//! file does not).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use gmon::stacks::WalkStats;

use super::input::{read_file, GmonInput};
use crate::{Error, Result};

/// The stacks file beside `gmon`: its name with `.stacks` appended.
pub fn stacks_path(gmon: &Path) -> PathBuf {
    let mut s = gmon.as_os_str().to_owned();
    s.push(".stacks");
    PathBuf::from(s)
}

/// The stacks file of `gmon` to read: [`stacks_path`], or the same name in the profile's side
/// folder ([`crate::profile::input::side_file`]).
pub fn find_stacks(gmon: &Path) -> PathBuf {
    let beside = stacks_path(gmon);
    match beside.file_name().and_then(|n| n.to_str()) {
        Some(name) => crate::profile::input::side_file(gmon, name),
        None => beside,
    }
}

/// One frame: the object it lies in (0 = the executable, else an index into
/// [`Sampled::objects`]; `None` when no object record holds it) and its link-time lookup
/// address (for a return address, the address of its call's last byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Frame {
    /// Object index.
    pub object: Option<u32>,
    /// Link-time address to look up.
    pub addr: u64,
}

/// One distinct stack and the samples that had it.
#[derive(Debug, Clone)]
pub struct SampledStack {
    /// Samples.
    pub count: u64,
    /// Frames, innermost first.
    pub frames: Vec<Frame>,
    /// The walk stopped short of the outermost frame (its outermost frame's callers are
    /// missing).
    pub cut: bool,
}

/// The sampled stacks of every gmon file, summed.
#[derive(Debug, Clone, Default)]
pub struct Sampled {
    /// The stacks files read.
    pub files: Vec<PathBuf>,
    /// Object paths; index 0 is the executable (its path as the loader named it, or empty).
    pub objects: Vec<Vec<u8>>,
    /// The stacks.
    pub stacks: Vec<SampledStack>,
    /// How the walks ended, summed over the files.
    pub stats: WalkStats,
    /// Some file's tables were full (arcs or stacks dropped).
    pub dropped: bool,
    /// The walk's depth limit (the largest of the files').
    pub max_depth: u32,
}

/// Where a cut walk ended: the object of its outermost frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CutEnd<'a> {
    /// The executable.
    Executable,
    /// A shared object (its path).
    Object(&'a [u8]),
    /// An address in no object record.
    Nowhere,
}

/// Inclusive counts over the nodes a resolver maps frames to.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// All samples (the sum of the stacks' counts).
    pub samples: u64,
    /// Per node: samples with the node anywhere on the stack (once per sample).
    pub inclusive: Vec<u64>,
    /// Per node: samples with the node as the innermost frame.
    pub leaf: Vec<u64>,
    /// (caller, callee) → samples with that call on the stack (once per sample); consecutive
    /// frames of one node (direct recursion) give a (node, node) edge.
    pub edges: HashMap<(usize, usize), u64>,
}

/// Counts from a file are summed saturating: a crafted file's counts can add up past 2^64.
fn add(a: &mut WalkStats, b: &WalkStats) {
    for (x, y) in [
        (&mut a.walks, b.walks),
        (&mut a.complete, b.complete),
        (&mut a.no_info, b.no_info),
        (&mut a.bad_unwind, b.bad_unwind),
        (&mut a.too_deep, b.too_deep),
        (&mut a.no_range, b.no_range),
        (&mut a.fp_frames, b.fp_frames),
        (&mut a.arcs_dropped, b.arcs_dropped),
        (&mut a.stacks_dropped, b.stacks_dropped),
    ] {
        *x = x.saturating_add(y);
    }
}

impl Sampled {
    /// Add one stacks file's contents (`name` for messages).
    pub fn add_file(&mut self, name: &str, data: &[u8]) -> Result<()> {
        let f = gmon::stacks::parse(data).map_err(|e| Error::input(format!("{name}: {e}")))?;
        if self.objects.is_empty() {
            self.objects.push(
                f.objects
                    .first()
                    .map(|o| o.path.to_vec())
                    .unwrap_or_default(),
            );
        }
        let exe = f.objects.first().map(|o| (o.bias, o.path));
        let ids: Vec<u32> = f
            .objects
            .iter()
            .map(|o| {
                if Some((o.bias, o.path)) == exe {
                    return 0;
                }
                match self.objects.iter().skip(1).position(|p| p == o.path) {
                    Some(i) => i as u32 + 1,
                    None => {
                        self.objects.push(o.path.to_vec());
                        self.objects.len() as u32 - 1
                    }
                }
            })
            .collect();
        for s in &f.stacks {
            let frames = s
                .pcs()
                .enumerate()
                .map(|(i, pc)| {
                    let pc = if i == 0 { pc } else { pc.wrapping_sub(1) };
                    match f.objects.iter().position(|o| o.contains(pc)) {
                        Some(k) => Frame {
                            object: Some(ids[k]),
                            addr: pc.wrapping_sub(f.objects[k].bias),
                        },
                        None => Frame {
                            object: None,
                            addr: pc,
                        },
                    }
                })
                .collect();
            self.stacks.push(SampledStack {
                count: s.count,
                frames,
                cut: s.cut(),
            });
        }
        add(&mut self.stats, &f.header.stats);
        self.dropped |= f.header.flags & gmon::stacks::FLAG_DROPPED != 0;
        self.max_depth = self.max_depth.max(f.header.max_depth);
        Ok(())
    }

    /// The stacks files beside `gmons`, read and summed: `None` when none has one. When only
    /// some have one, `None` and a warning for `warnings`.
    pub fn find<'g>(
        gmons: impl IntoIterator<Item = &'g GmonInput>,
        warnings: &mut Vec<String>,
    ) -> Result<Option<Sampled>> {
        let gmons: Vec<&GmonInput> = gmons.into_iter().collect();
        let paths: Vec<PathBuf> = gmons.iter().map(|g| find_stacks(&g.path)).collect();
        let present: Vec<bool> = paths.iter().map(|p| p.is_file()).collect();
        if !present.iter().any(|&p| p) {
            return Ok(None);
        }
        if let Some(i) = present.iter().position(|&p| !p) {
            warnings.push(format!(
                "{} has no stacks file beside it ({}): total times and the sampled call graph are left out",
                gmons[i].name(),
                paths[i].display()
            ));
            return Ok(None);
        }
        let mut s = Sampled::default();
        for p in paths {
            let name = p.display().to_string();
            let data = read_file(&p).map_err(|e| Error::input(format!("{name}: {e}")))?;
            s.add_file(&name, &data)?;
            s.files.push(p);
        }
        Ok(Some(s))
    }

    /// Sum of the stacks' counts.
    pub fn samples(&self) -> u64 {
        self.stacks
            .iter()
            .fold(0u64, |a, s| a.saturating_add(s.count))
    }

    /// These stacks without the frames `drop` names (the runtime's own, see
    /// [`is_runtime_frame`]); `None` when no frame is dropped. A stack keeps its samples.
    pub fn without_frames(&self, drop: impl Fn(Frame) -> bool) -> Option<Sampled> {
        let mut memo: HashMap<Frame, bool> = HashMap::new();
        let mut dropped = false;
        let stacks = self
            .stacks
            .iter()
            .map(|s| SampledStack {
                count: s.count,
                frames: s
                    .frames
                    .iter()
                    .copied()
                    .filter(|&f| {
                        let d = *memo.entry(f).or_insert_with(|| drop(f));
                        dropped |= d;
                        !d
                    })
                    .collect(),
                cut: s.cut,
            })
            .collect();
        dropped.then(|| Sampled {
            stacks,
            ..self.clone()
        })
    }

    /// Inclusive counts over `nodes` nodes, with `resolve` mapping a frame to its node (or
    /// `None`: a frame of no node, which belongs to no edge either).
    pub fn measure(&self, nodes: usize, resolve: impl Fn(Frame) -> Option<usize>) -> Measured {
        let mut memo: HashMap<Frame, Option<usize>> = HashMap::new();
        let mut m = Measured {
            samples: self.samples(),
            inclusive: vec![0; nodes],
            leaf: vec![0; nodes],
            edges: HashMap::new(),
        };
        // The stack that last counted each node: a node counts once per stack.
        let mut seen = vec![usize::MAX; nodes];
        let mut edges: Vec<(usize, usize)> = Vec::new();
        for (k, s) in self.stacks.iter().enumerate() {
            let ids: Vec<Option<usize>> = s
                .frames
                .iter()
                .map(|&f| {
                    *memo
                        .entry(f)
                        .or_insert_with(|| resolve(f).filter(|&n| n < nodes))
                })
                .collect();
            if let Some(Some(leaf)) = ids.first() {
                m.leaf[*leaf] = m.leaf[*leaf].saturating_add(s.count);
            }
            for &n in ids.iter().flatten() {
                if seen[n] != k {
                    seen[n] = k;
                    m.inclusive[n] = m.inclusive[n].saturating_add(s.count);
                }
            }
            edges.clear();
            for w in ids.windows(2) {
                if let (Some(callee), Some(caller)) = (w[0], w[1]) {
                    edges.push((caller, callee));
                }
            }
            edges.sort_unstable();
            edges.dedup();
            for &e in &edges {
                let c = m.edges.entry(e).or_insert(0);
                *c = c.saturating_add(s.count);
            }
        }
        m
    }

    /// Walks cut short of the outermost frame (frames missing: no unwind information,
    /// unusable unwind information, deeper than the limit, a stack the runtime did not know):
    /// every walk the runtime marks cut ([`gmon::stacks::STACK_CUT`]), as a share of all walks.
    pub fn cut_share(&self) -> f64 {
        if self.stats.walks == 0 {
            0.0
        } else {
            self.cut_walks() as f64 / self.stats.walks as f64
        }
    }

    /// The walks cut short ([`Sampled::cut_share`]'s numerator).
    pub fn cut_walks(&self) -> u64 {
        let st = &self.stats;
        st.no_info
            .saturating_add(st.bad_unwind)
            .saturating_add(st.too_deep)
            .saturating_add(st.no_range)
    }

    /// Where the cut walks ended (the object of their outermost frame), with their samples,
    /// most first.
    pub fn cut_ends(&self) -> Vec<(CutEnd<'_>, u64)> {
        let mut by: HashMap<Option<u32>, u64> = HashMap::new();
        for s in self.stacks.iter().filter(|s| s.cut) {
            if let Some(f) = s.frames.last() {
                *by.entry(f.object).or_insert(0) += s.count;
            }
        }
        let mut v: Vec<(CutEnd<'_>, u64)> = by
            .into_iter()
            .map(|(o, n)| {
                let end = match o {
                    Some(0) => CutEnd::Executable,
                    Some(o) => self
                        .objects
                        .get(o as usize)
                        .map_or(CutEnd::Nowhere, |p| CutEnd::Object(p)),
                    None => CutEnd::Nowhere,
                };
                (end, n)
            })
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }

    /// Warnings about what the walks could not see: walks cut short (and where), and full
    /// tables.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        let share = self.cut_share();
        if share >= 0.01 {
            let st = &self.stats;
            let mut why = Vec::new();
            for (n, what) in [
                (
                    st.no_info,
                    "code without unwind information (JIT code, an object without .eh_frame)"
                        .to_string(),
                ),
                (
                    st.bad_unwind,
                    "unusable unwind information or stack contents".to_string(),
                ),
                (
                    st.too_deep,
                    format!("stacks past the depth limit of {} frames", self.max_depth),
                ),
                (
                    st.no_range,
                    "a stack the runtime did not know (an alternate signal stack, a coroutine's)"
                        .to_string(),
                ),
            ] {
                if n > 0 {
                    why.push(format!("{n} in {what}"));
                }
            }
            let ends = self.cut_ends();
            let total: u64 = ends.iter().map(|e| e.1).sum();
            let wher: Vec<String> = ends
                .iter()
                .take(3)
                .map(|(end, n)| {
                    let name = match end {
                        CutEnd::Executable => "the executable".to_string(),
                        CutEnd::Object(p) => {
                            let p = String::from_utf8_lossy(p);
                            p.rsplit('/').next().unwrap_or(&p).to_string()
                        }
                        CutEnd::Nowhere => "no known object".to_string(),
                    };
                    format!("{name} {:.0}%", 100.0 * *n as f64 / total.max(1) as f64)
                })
                .collect();
            w.push(format!(
                "{:.0}% of the sampled stacks were cut short ({}; they ended in {}): total times \
                 and the call graph miss those callers",
                100.0 * share,
                why.join(", "),
                if wher.is_empty() {
                    "-".to_string()
                } else {
                    wher.join(", ")
                }
            ));
        }
        if self.dropped {
            w.push(format!(
                "the runtime's stack tables were full: {} stacks and {} arc counts were dropped, \
                 so total times are too low",
                self.stats.stacks_dropped, self.stats.arcs_dropped
            ));
        }
        w
    }
}

/// A function of the runtime itself (`profil_rt::threads::trampoline`, which starts every
/// thread the program makes when the runtime is linked in or preloaded, or
/// `profil_rt_pthread_create`, the C name its `pthread_create` also has), by its demangled
/// name: such frames are the profiler's, never the program's, and no stack or row shows them.
/// The runtime leaves them out of its walks where it can; an older profile, or a sample
/// whose innermost frame is the runtime's, still names them.
pub fn is_runtime_frame(demangled: &str) -> bool {
    demangled.starts_with("profil_rt::")
        || demangled.starts_with("<profil_rt::")
        || demangled.starts_with("profil_rt_")
}

#[cfg(test)]
mod tests {
    use super::*;
    use gmon::stacks::{Header, Object, StacksWriter};

    fn file(stacks: &[(u64, &[u64])]) -> Vec<u8> {
        let mut w = StacksWriter::new(Vec::new());
        w.header(&Header {
            max_depth: 128,
            objects: 2,
            stacks: stacks.len() as u64,
            ..Header::default()
        })
        .unwrap();
        w.object(&Object {
            bias: 0x1000,
            start: 0x2000,
            end: 0x3000,
            path: b"",
        })
        .unwrap();
        w.object(&Object {
            bias: 0x10_0000,
            start: 0x10_0000,
            end: 0x11_0000,
            path: b"/lib/libx.so",
        })
        .unwrap();
        for (c, pcs) in stacks {
            w.stack(*c, pcs.len() as u32, pcs.iter().copied()).unwrap();
        }
        w.finish().unwrap()
    }

    #[test]
    fn the_runtimes_functions_are_its_own_by_rust_path_or_c_name() {
        for name in [
            "profil_rt::threads::trampoline",
            "<profil_rt::X as core::ops::Drop>::drop",
            // The C name of its pthread_create, which a sample in libc's pthread_create (lazy
            // binding, under load) once put into a report's call graph.
            "profil_rt_pthread_create",
            "profil_rt_execvp",
        ] {
            assert!(is_runtime_frame(name), "{name}");
        }
        for name in [
            "profil",
            "pthread_create",
            "main",
            "my::profil_rt",
            "profil_rtx",
        ] {
            assert!(!is_runtime_frame(name), "{name}");
        }
    }

    #[test]
    fn frames_map_to_link_time_and_return_addresses_to_their_call() {
        let mut s = Sampled::default();
        s.add_file("x", &file(&[(3, &[0x2010, 0x2101, 0x10_0050, 0x9999])]))
            .unwrap();
        let f = &s.stacks[0].frames;
        assert_eq!(
            f[0],
            Frame {
                object: Some(0),
                addr: 0x1010
            }
        );
        assert_eq!(
            f[1],
            Frame {
                object: Some(0),
                addr: 0x1100
            }
        );
        assert_eq!(
            f[2],
            Frame {
                object: Some(1),
                addr: 0x4f
            }
        );
        assert_eq!(f[3].object, None);
        assert_eq!(s.objects[1], b"/lib/libx.so");
    }

    #[test]
    fn recursion_counts_once_per_sample() {
        let mut s = Sampled::default();
        // node = address / 0x100 in the executable: leaf 0, then 1 recursing, then 2.
        s.add_file(
            "x",
            &file(&[
                (5, &[0x2010, 0x2110, 0x2110, 0x2110, 0x2210]),
                (2, &[0x2210]),
            ]),
        )
        .unwrap();
        let m = s.measure(4, |f| {
            (f.object == Some(0)).then_some(((f.addr - 0x1000) / 0x100) as usize)
        });
        assert_eq!(m.samples, 7);
        assert_eq!(m.inclusive, [5, 5, 7, 0]);
        assert_eq!(m.leaf, [5, 0, 2, 0]);
        assert_eq!(m.edges[&(1, 1)], 5);
        assert_eq!(m.edges[&(1, 0)], 5);
        assert_eq!(m.edges[&(2, 1)], 5);
    }

    #[test]
    fn counts_past_2_to_the_64_saturate() {
        let mut s = Sampled::default();
        let f = file(&[(u64::MAX, &[0x2010, 0x2110]), (u64::MAX, &[0x2010, 0x2110])]);
        s.add_file("x", &f).unwrap();
        s.add_file("y", &f).unwrap();
        let m = s.measure(2, |f| {
            (f.object == Some(0)).then_some(((f.addr - 0x1000) / 0x100) as usize)
        });
        assert_eq!(m.samples, u64::MAX);
        assert_eq!(m.inclusive, [u64::MAX, u64::MAX]);
        assert_eq!(m.edges[&(1, 0)], u64::MAX);
    }

    #[test]
    fn a_bad_file_is_an_input_error_with_the_offset() {
        let mut b = file(&[(1, &[0x2010])]);
        let n = b.len();
        // The stack's depth field (after 112 + 2 object records of 32 and 48 bytes + count).
        let at = n - 8 - 8;
        b[at..at + 4].copy_from_slice(&7u32.to_le_bytes());
        let e = Sampled::default().add_file("g.stacks", &b).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().starts_with("g.stacks: stacks file: "), "{e}");
        assert!(
            e.to_string().contains(&format!("at byte {}", at + 8)),
            "{e}"
        );
    }
}
