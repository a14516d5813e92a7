//! Total times and the measured call graph for the report across objects ([`super::objects`])
//! when the runtime's stacks file is beside the profile ([`crate::profile::stacks`]).
//!
//! Each frame of a sampled stack is mapped to a function of its object with the same symbol
//! machinery the rows use ([`super::loaded::load_object`], [`FunctionMap`]): the executable
//! named on the command line for object 0, every other object read from the path the loader
//! used. A frame inside an object but in none of its functions counts for that object's
//! `<outside known functions>` row, as its self samples do. The rows then gain a total (the
//! samples with the function anywhere on the stack, once per sample) and a 95% interval, and
//! the call graph from the samples follows the table ([`super::sampled_graph`]; functions of
//! the executable with their `file:line`, those of other objects named `function (object)`).
//!
//! A node is a function — its object, symbol and address — never a name: the instances of a
//! generic function, which demangle alike, are nodes and rows of their own, each with its own
//! total, and their names are told apart the same way in the rows and the graph
//! ([`super::loaded::distinct_names`]). The runtime's own frames (its thread trampoline,
//! [`crate::profile::stacks::is_runtime_frame`]) are dropped from every stack.
//!
//! Output: the table gains a `total` column (and `total 95%` with `--wide`); JSON rows and
//! CSV lines gain `total_seconds`, `total_samples`, `total_ci95_low_seconds`,
//! `total_ci95_high_seconds`
//! after the other fields (null or empty for a row on no stack), and the JSON a `call_graph`
//! object with `"kind": "sampled"`. Rows that are on some stack without self samples are
//! added with zero self samples.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use profil_symbols::ranges::FunctionMap;
use profil_symbols::ElfImage;

use super::loaded::{load_object, Loaded, ObjectRow};
use super::sampled_graph::SampledGraph;
use crate::profile::stacks::Sampled;
use crate::profile::OUTSIDE;

/// One node: a function of an object, or an object's code outside its functions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Node {
    object: String,
    function: String,
    raw: String,
    /// The function's address (0 outside functions): with `raw`, its identity.
    addr: u64,
}

/// Display name of an object path: its file name.
fn display_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// What identifies a row's function: (object, symbol, address) ([`ObjectRow::key`]).
pub type RowKey = (String, String, u64);

/// Totals per row key ([`ObjectRow::key`]), and the measured graph.
pub struct StackTotals {
    /// (object, symbol, address) → the function's name (told apart from others where
    /// demangled names collide) and the samples with it on the stack.
    pub totals: HashMap<RowKey, (String, u64)>,
    /// The call graph.
    pub graph: SampledGraph,
}

/// Map every frame of `sampled` to a node and measure. `exe`: the name and symbol file of the
/// executable on the command line (object 0). `loaded`: the objects the rows were made from,
/// reused (an object only on the stacks is read here).
pub fn measure(
    sampled: &Sampled,
    (exe_name, exe_data): (&str, &[u8]),
    loaded: &Loaded,
    hz: u32,
    debug_root: &Path,
    rows: &[ObjectRow],
    warnings: &mut Vec<String>,
) -> StackTotals {
    // The address-range rows of code without symbols (`<obj+0xLO-0xHI>`), per object: a frame
    // there is counted for the row whose range holds it (or is within the rows' grouping gap),
    // else for a range row of its own 4 KiB page, named the same way.
    let mut ranges: HashMap<&str, Vec<(u64, u64)>> = HashMap::new();
    for r in rows {
        if let Some(range) = r.unknown_range {
            ranges.entry(&r.object).or_default().push(range);
        }
    }
    let unknown = |object: &str, addr: u64| -> String {
        let r = ranges.get(object).map_or(&[][..], Vec::as_slice);
        super::loaded::unknown_frame_name(object, r, addr)
    };
    // Each object's symbol file: the one the rows were made from, else read here once (a
    // library that cannot be read maps to nothing).
    let mut read_here: Vec<Option<Vec<u8>>> = Vec::new();
    let mut names: Vec<Option<String>> = Vec::new();
    for (k, p) in sampled.objects.iter().enumerate() {
        if k == 0 {
            read_here.push(None);
            names.push(Some(exe_name.to_owned()));
            continue;
        }
        let path = PathBuf::from(String::from_utf8_lossy(p).into_owned());
        if loaded.files.contains_key(&path) {
            read_here.push(None);
            names.push(Some(display_name(&path)));
            continue;
        }
        let data = load_object(&path, &[], debug_root).ok().map(|(d, _)| d);
        names.push(data.is_some().then(|| display_name(&path)));
        read_here.push(data);
    }
    let images: Vec<Option<(String, ElfImage<'_>)>> = sampled
        .objects
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let name = names[k].clone()?;
            let data: &[u8] = if k == 0 {
                exe_data
            } else {
                match &read_here[k] {
                    Some(d) => d,
                    None => loaded
                        .files
                        .get(Path::new(String::from_utf8_lossy(p).as_ref()))?,
                }
            };
            Some((name, ElfImage::parse(data).ok()?))
        })
        .collect();
    let maps: Vec<Option<(String, FunctionMap<'_>)>> = images
        .iter()
        .map(|i| {
            let (name, image) = i.as_ref()?;
            let table = image.symtab.as_ref().or(image.dynsym.as_ref())?;
            Some((name.clone(), FunctionMap::build(image, table)))
        })
        .collect();
    let computed;
    let exe_locations = match &loaded.exe_locations {
        Some(l) => l,
        None => {
            computed = profil_symbols::dwarf::function_locations(exe_data);
            &computed
        }
    };
    let row_location: HashMap<(u64, &str), &str> = rows
        .iter()
        .filter(|r| r.object == exe_name)
        .filter_map(|r| {
            let (addr, raw) = r.symbol.as_ref()?;
            Some(((*addr, raw.as_str()), r.location.as_deref()?))
        })
        .collect();
    // Each node's `file:line`, for the executable's functions.
    let mut node_location: Vec<Option<String>> = Vec::new();
    // Nodes are interned as frames are resolved.
    let mut nodes: Vec<Node> = Vec::new();
    let mut index: HashMap<Node, usize> = HashMap::new();
    let mut resolved: HashMap<(u32, Option<usize>, Option<String>), Option<usize>> = HashMap::new();
    let mut frame_node: HashMap<crate::profile::stacks::Frame, Option<usize>> = HashMap::new();
    // The runtime's own frames (its thread trampoline), dropped from every stack.
    let mut runtime: std::collections::HashSet<crate::profile::stacks::Frame> = Default::default();
    for s in &sampled.stacks {
        for &f in &s.frames {
            if frame_node.contains_key(&f) {
                continue;
            }
            let node = f.object.and_then(|o| {
                let (oname, map) = maps.get(o as usize)?.as_ref()?;
                let func = map.function_at(f.addr);
                let outside = match func {
                    Some(_) => None,
                    None => Some(unknown(oname, f.addr)),
                };
                *resolved
                    .entry((o, func, outside.clone()))
                    .or_insert_with(|| {
                        let (function, raw, addr) = match (func, outside) {
                            (Some(i), _) => {
                                let raw =
                                    String::from_utf8_lossy(map.functions[i].name).into_owned();
                                (
                                    profil_symbols::demangle::display_name(&raw).into_owned(),
                                    raw,
                                    map.functions[i].addr,
                                )
                            }
                            (None, Some(name)) => (name.clone(), name, 0),
                            (None, None) => (OUTSIDE.to_owned(), OUTSIDE.to_owned(), 0),
                        };
                        if crate::profile::stacks::is_runtime_frame(&function) {
                            return None;
                        }
                        let n = Node {
                            object: oname.clone(),
                            function,
                            raw,
                            addr,
                        };
                        // The row's location where there is a row (its entry's line from
                        // the line table when DWARF has no declaration), else DWARF's.
                        let location = match (o, func) {
                            (0, Some(i)) => row_location
                                .get(&(map.functions[i].addr, n.raw.as_str()))
                                .map(|l| (*l).to_owned())
                                .or_else(|| {
                                    exe_locations
                                        .get(&map.functions[i].addr)
                                        .map(|l| l.to_string())
                                }),
                            _ => None,
                        };
                        Some(*index.entry(n.clone()).or_insert_with(|| {
                            nodes.push(n);
                            node_location.push(location);
                            nodes.len() - 1
                        }))
                    })
            });
            if node.is_none()
                && f.object
                    .is_some_and(|o| maps.get(o as usize).is_some_and(Option::is_some))
            {
                runtime.insert(f);
            }
            frame_node.insert(f, node);
        }
    }
    let filtered = sampled.without_frames(|f| runtime.contains(&f));
    let sampled = filtered.as_ref().unwrap_or(sampled);
    let m = sampled.measure(nodes.len(), |f| frame_node.get(&f).copied().flatten());
    warnings.extend(sampled.warnings());
    // One name per node, told apart from the rows' and each other's where they collide.
    let named: Vec<super::loaded::Named<'_>> = nodes
        .iter()
        .map(|n| super::loaded::Named {
            object: &n.object,
            display: std::borrow::Cow::Borrowed(&n.function),
            raw: &n.raw,
            addr: n.addr,
        })
        .chain(rows.iter().filter_map(super::loaded::Named::of_row))
        .collect();
    let mut distinct = super::loaded::distinct_names(&named, exe_name, exe_data);
    distinct.truncate(nodes.len());
    let totals = nodes
        .iter()
        .zip(&m.inclusive)
        .zip(&distinct)
        .map(|((n, &t), name)| ((n.object.clone(), n.raw.clone(), n.addr), (name.clone(), t)))
        .collect();
    let exe = exe_name.to_owned();
    let graph = SampledGraph::build(
        &m,
        hz,
        sampled.stats,
        |i| {
            let n = &nodes[i];
            if n.object == exe {
                (distinct[i].clone(), n.raw.clone())
            } else {
                (format!("{} ({})", distinct[i], n.object), n.raw.clone())
            }
        },
        |i| node_location[i].clone(),
        &HashMap::new(),
        Vec::new(),
    );
    StackTotals { totals, graph }
}

/// Rows that are on some stack but have no self samples, added with zero self samples; then
/// each row's total, in row order. Rows take the names the graph gives their functions.
pub fn with_totals(rows: &mut Vec<ObjectRow>, t: &StackTotals) -> Vec<Option<u64>> {
    let present: std::collections::HashSet<RowKey> = rows.iter().map(ObjectRow::key).collect();
    let mut extra: Vec<(&RowKey, &(String, u64))> = t
        .totals
        .iter()
        .filter(|(k, v)| v.1 > 0 && !present.contains(*k))
        .collect();
    extra.sort_by(|a, b| b.1 .1.cmp(&a.1 .1).then(a.0.cmp(b.0)));
    for ((object, raw, addr), (function, _)) in extra {
        rows.push(ObjectRow {
            object: object.clone(),
            function: function.clone(),
            samples: 0.0,
            location: None,
            unknown_range: None,
            symbol: (*addr != 0).then(|| (*addr, raw.clone())),
        });
    }
    rows.iter_mut()
        .map(|r| {
            let (name, total) = t.totals.get(&r.key())?;
            r.function.clone_from(name);
            Some(*total)
        })
        .collect()
}
