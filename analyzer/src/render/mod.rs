//! Rendering report data for people: how names and locations are shortened in tables.
//! (The reports' JSON and CSV keep the full forms.)

pub mod names;
