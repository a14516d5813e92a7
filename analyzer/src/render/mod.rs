//! Rendering report data for people: how names and locations are shortened in tables
//! ([`names`]), how times are written ([`units`]), the one table layout ([`table`]) and
//! the CSV writer ([`csv`]).
//! (The reports' JSON and CSV keep the full forms.)

pub mod csv;
pub mod names;
pub mod table;
pub mod units;
