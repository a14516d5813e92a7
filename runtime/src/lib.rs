//! profil-rs runtime (skeleton; filled in by issue 3).
#![no_std]
