//! gmon.out format library (skeleton; filled in by issue 2).
#![no_std]
#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;
