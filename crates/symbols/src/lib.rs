//! Symbolization for profil-rs (skeleton; filled in by issue 5).
