//! Rendering report data for people: how names and locations are shortened in tables
//! ([`names`]), how times are written ([`units`]), the one table layout ([`table`]), the
//! CSV writer ([`csv`]), the default report's call graph as text and JSON ([`callgraph`]) and
//! the pcsample timeline as text and SVG ([`timeline`]); the default report's table, JSON and
//! CSV ([`default`]), and the call graph measured from sampled stacks that replaces the
//! estimated one when the runtime's stacks file is there ([`sampled_graph`]).
//! (The reports' JSON and CSV keep the full forms.)

pub mod callgraph;
pub mod csv;
pub mod default;
pub mod names;
pub mod sampled_graph;
pub mod table;
pub mod timeline;
pub mod units;
