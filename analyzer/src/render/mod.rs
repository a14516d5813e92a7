//! Rendering report data: how names and locations are shortened in tables ([`names`]) and
//! times written ([`crate::units`]), the one table layout ([`table`]), the CSV writer ([`csv`]),
//! the JSON writer and its layout ([`json`]: `serde` structs, key order fixed by their
//! fields); then one module per report: the default report's table, JSON and CSV
//! ([`default`]) and its call graph as text and JSON ([`callgraph`]), the call graph measured
//! from sampled stacks that replaces the estimated one when the runtime's stacks file is there
//! ([`sampled_graph`]), the line and inline reports ([`lines`], [`inline`]), `--compare-gprof`
//! ([`compare`]), the rows with an object column of the report across shared objects and the
//! pcsample report ([`objects`]) and the pcsample timeline as text and SVG ([`timeline`]).
//! (The reports' JSON and CSV keep the full forms.)

pub mod callgraph;
pub mod compare;
pub mod csv;
pub mod default;
pub mod inline;
pub mod json;
pub mod lines;
pub mod names;
pub mod objects;
pub mod sampled_graph;
pub mod table;
pub mod timeline;
