//! Rendering report data for people: how names and locations are shortened in tables
//! ([`names`]), how times are written ([`units`]), and the one table layout ([`table`]).
//! (The reports' JSON and CSV keep the full forms.)

pub mod names;
pub mod table;
pub mod units;
