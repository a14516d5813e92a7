//! Rendering report data for people: how names and locations are shortened in tables
//! ([`names`]), how times are written ([`units`]).
//! (The reports' JSON and CSV keep the full forms.)

pub mod names;
pub mod units;
