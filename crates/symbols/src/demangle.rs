//! Demangling the way gprof prints names: `bfd_demangle(name, DMGL_ANSI | DMGL_PARAMS)`.
//!
//! libiberty, as called by gprof, tries the Rust demangler first and the C++ (Itanium)
//! demangler second, without `DMGL_VERBOSE`, so Rust legacy names lose their `::h<hash>`
//! and v0 names their crate disambiguators. Rust legacy names are only treated as Rust
//! when they end in a 16-hex-digit hash segment; otherwise the C++ demangler gets them.
//! BFD also strips leading `.`/`$` characters and a `@suffix` and puts both back around the
//! demangled text.
//!
//! Rust names go through `rustc-demangle` (alternate form, no hash). For C++ the reference
//! is libiberty's `cp-demangle.c`, and the same code ships in every libstdc++ as
//! `__cxa_demangle` (which differs from gprof's call only by `DMGL_TYPES`, which matters only
//! for names that do not start with `_Z`, and those are never passed to it). So C++ names are
//! demangled by the system's `libstdc++.so.6`, loaded at run time ([`cxa`]); the
//! `cpp_demangle` crate is the fallback when it cannot be loaded. It differs from libiberty
//! on some names (pack expansions of references, literal operators).
//!
//! gprof's `--demangle=STYLE` sets libiberty's style ([`Style`]): `java` prints C++ names the
//! Java way ([`java`], libiberty's demangler written here whole), `gnat` decodes
//! GNAT's Ada names and brackets every other name ([`ada_demangle`]), `dlang` changes only D
//! names ([`dlang`], libiberty's whole D grammar). Every style renders every name as gprof
//! does, so the gprof emulation refuses none.

use std::borrow::Cow;

pub mod dlang;
mod java;

/// libiberty's demangling styles gprof's `--demangle=STYLE` reproduces here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Style {
    /// `auto` (the default): Rust's demangler first (legacy Rust names are Itanium names
    /// too), then C++'s.
    #[default]
    Auto,
    /// `gnu-v3`: C++'s (Itanium) only: a legacy Rust name keeps its hash as a last segment.
    GnuV3,
    /// `rust`: Rust's only: C++ names are printed raw.
    Rust,
    /// `java`: libiberty's `java_demangle_v3` (the C++ demangler printing Java: `.` between
    /// names, Java type names, no `*`, the return type after the parameters; [`java`]); a name
    /// it rejects, or that starts with neither `_Z` nor `_GLOBAL_`, is printed raw.
    Java,
    /// `gnat`: libiberty's `ada_demangle`, which every name goes through: GNAT's encoding
    /// (`pkg__sub` is `pkg.sub`) is decoded, and a name that is not one is printed in angle
    /// brackets (`<_start>`).
    Gnat,
    /// `dlang`: libiberty's `dlang_demangle` ([`dlang`]): only names starting `_D` change
    /// (`_Dmain` is `D main`, `_D3foo3barFiZv` is `foo.bar(int)`); one it does not read is
    /// printed raw.
    Dlang,
}

/// [`gprof_demangle_style`] under `dlang`, on the name's bytes (which need not be UTF-8, nor
/// the demangled text: an identifier's length may split a character): `None` where gprof
/// prints the name raw.
pub fn gprof_demangle_dlang(name: &[u8]) -> Option<Vec<u8>> {
    let start = name
        .iter()
        .position(|&b| b != b'.' && b != b'$')
        .unwrap_or(name.len());
    let (prefix, rest) = name.split_at(start);
    let at = rest.iter().position(|&b| b == b'@').unwrap_or(rest.len());
    let (core, suffix) = rest.split_at(at);
    let mut out = prefix.to_vec();
    out.extend(dlang::demangle(core)?);
    out.extend_from_slice(suffix);
    Some(out)
}

/// BFD's split of `name`: leading `.`/`$` characters, the name, a `@suffix`.
fn bfd_core(name: &str) -> (&str, &str, &str) {
    let trimmed = name.trim_start_matches(['.', '$']);
    let prefix = &name[..name.len() - trimmed.len()];
    match trimmed.find('@') {
        Some(i) => (prefix, &trimmed[..i], &trimmed[i..]),
        None => (prefix, trimmed, ""),
    }
}

/// Demangle `name` as gprof does; returns `None` when the name is not mangled (printed as is).
pub fn gprof_demangle(name: &str) -> Option<String> {
    gprof_demangle_style(name, Style::Auto)
}

/// [`gprof_demangle`] under `--demangle=STYLE`.
pub fn gprof_demangle_style(name: &str, style: Style) -> Option<String> {
    let (prefix, core, suffix) = bfd_core(name);
    let demangled = match style {
        Style::Auto => rust_demangle(core).or_else(|| cxx_demangle(core))?,
        Style::GnuV3 => cxx_demangle(core)?,
        Style::Rust => rust_demangle(core)?,
        Style::Java => java::java_demangle(core)?,
        Style::Gnat => ada_demangle(core),
        Style::Dlang => String::from_utf8_lossy(&dlang::demangle(core.as_bytes())?).into_owned(),
    };
    Some(format!("{prefix}{demangled}{suffix}"))
}

/// Demangle for display: gprof's rules, falling back to the raw name.
pub fn display_name(name: &str) -> Cow<'_, str> {
    match gprof_demangle(name) {
        Some(s) => Cow::Owned(s),
        None => Cow::Borrowed(name),
    }
}

/// libiberty's `ada_demangle`: GNAT's encoding of Ada names (`gcc/ada/exp_dbug.ads`) decoded,
/// and anything else in angle brackets.
pub fn ada_demangle(name: &str) -> String {
    let name = name.strip_prefix("_ada_").unwrap_or(name);
    ada_decode(name.as_bytes()).unwrap_or_else(|| {
        if name.starts_with('<') {
            name.to_string()
        } else {
            format!("<{name}>")
        }
    })
}

/// The decoding proper: `None` where the name is not GNAT's encoding.
fn ada_decode(p: &[u8]) -> Option<String> {
    const OPERATORS: [(&str, &str); 19] = [
        ("Oabs", "abs"),
        ("Oand", "and"),
        ("Omod", "mod"),
        ("Onot", "not"),
        ("Oor", "or"),
        ("Orem", "rem"),
        ("Oxor", "xor"),
        ("Oeq", "="),
        ("One", "/="),
        ("Olt", "<"),
        ("Ole", "<="),
        ("Ogt", ">"),
        ("Oge", ">="),
        ("Oadd", "+"),
        ("Osubtract", "-"),
        ("Oconcat", "&"),
        ("Omultiply", "*"),
        ("Odivide", "/"),
        ("Oexpon", "**"),
    ];
    const SPECIAL: [(&str, &str); 5] = [
        ("_elabb", "'Elab_Body"),
        ("_elabs", "'Elab_Spec"),
        ("_size", "'Size"),
        ("_alignment", "'Alignment"),
        ("_assign", ".\":=\""),
    ];
    // Past the end reads as NUL, as in C.
    let at = |i: usize| p.get(i).copied().unwrap_or(0);
    let lower = |c: u8| c.is_ascii_lowercase();
    let digit = |c: u8| c.is_ascii_digit();
    if !lower(at(0)) {
        return None;
    }
    let mut d = String::new();
    let mut i = 0;
    loop {
        // An entity name: a lower-case identifier, or an operator.
        if lower(at(i)) {
            loop {
                d.push(at(i) as char);
                i += 1;
                let c = at(i);
                if !(lower(c) || digit(c) || (c == b'_' && (lower(at(i + 1)) || digit(at(i + 1)))))
                {
                    break;
                }
            }
        } else if at(i) == b'O' {
            let (code, op) = OPERATORS
                .iter()
                .find(|(code, _)| p[i..].starts_with(code.as_bytes()))?;
            i += code.len();
            d.push('"');
            d.push_str(op);
            d.push('"');
        } else {
            return None;
        }
        // Upper-case letters that may follow.
        if at(i) == b'T' && at(i + 1) == b'K' {
            if at(i + 2) == b'B' && at(i + 3) == 0 {
                break;
            } else if at(i + 2) == b'_' && at(i + 3) == b'_' {
                i += 4;
                d.push('.');
                continue;
            } else {
                return None;
            }
        }
        if at(i) == b'E' && at(i + 1) == 0 {
            return None;
        }
        if (at(i) == b'P' || at(i) == b'N') && at(i + 1) == 0 {
            break;
        }
        if (at(i) == b'N' || at(i) == b'S') && at(i + 1) == 0 {
            return None;
        }
        if at(i) == b'X' {
            i += 1;
            while at(i) == b'n' || at(i) == b'b' {
                i += 1;
            }
        }
        if at(i) == b'S' && at(i + 1) != 0 && (at(i + 2) == b'_' || at(i + 2) == 0) {
            d.push_str(match at(i + 1) {
                b'R' => "'Read",
                b'W' => "'Write",
                b'I' => "'Input",
                b'O' => "'Output",
                _ => return None,
            });
            i += 2;
        } else if at(i) == b'D' {
            d.push_str(match at(i + 1) {
                b'F' => ".Finalize",
                b'A' => ".Adjust",
                _ => return None,
            });
            break;
        }
        if at(i) == b'_' {
            if at(i + 1) == b'_' {
                i += 2;
                if digit(at(i)) {
                    // An overloading number.
                    loop {
                        i += 1;
                        if !(digit(at(i)) || (at(i) == b'_' && digit(at(i + 1)))) {
                            break;
                        }
                    }
                    if at(i) == b'X' {
                        i += 1;
                        while at(i) == b'n' || at(i) == b'b' {
                            i += 1;
                        }
                    }
                } else if at(i) == b'_' && at(i + 1) != b'_' {
                    let (code, text) = SPECIAL
                        .iter()
                        .find(|(code, _)| p[i..].starts_with(code.as_bytes()))?;
                    let _ = code;
                    d.push_str(text);
                    break;
                } else {
                    d.push('.');
                    continue;
                }
            } else if at(i + 1) == b'B' || at(i + 1) == b'E' {
                i += 2;
                while digit(at(i)) {
                    i += 1;
                }
                if at(i) == b's' && at(i + 1) == 0 {
                    break;
                }
                return None;
            } else {
                return None;
            }
        }
        if at(i) == b'.' && digit(at(i + 1)) {
            // A nested subprogram.
            i += 2;
            while digit(at(i)) {
                i += 1;
            }
        }
        if at(i) == 0 {
            break;
        }
        return None;
    }
    Some(d)
}

fn rust_demangle(sym: &str) -> Option<String> {
    if !sym.is_ascii() {
        return None;
    }
    if let Some(v0) = sym.strip_prefix("_R") {
        // v0 symbols use only [_0-9a-zA-Z]; a '.' starts an ignored suffix.
        let body = v0.split('.').next().unwrap_or("");
        if !body.bytes().all(|b| b == b'_' || b.is_ascii_alphanumeric()) {
            return None;
        }
        let d = rustc_demangle::try_demangle(&sym[..2 + body.len()]).ok()?;
        return Some(format!("{d:#}"));
    }
    if !sym.starts_with("_ZN") {
        return None;
    }
    if !sym
        .bytes()
        .all(|b| b == b'_' || b.is_ascii_alphanumeric() || b"$.:@".contains(&b))
    {
        return None;
    }
    // Drop a `.suffix` after the final 'E' (libiberty's loop, byte for byte).
    let bytes = sym.as_bytes();
    let mut len = bytes.len();
    let mut dot_suffix = true;
    while len > 0 && !(dot_suffix && bytes[len - 1] == b'E') {
        dot_suffix = bytes[len - 1] == b'.';
        len -= 1;
    }
    if len == 0 {
        return None;
    }
    let without_e = &sym[..len - 1];
    // Legacy Rust always ends in `17h` + 16 hex digits.
    if without_e.len() <= 19 || !without_e[without_e.len() - 19..].starts_with("17h") {
        return None;
    }
    if !without_e[without_e.len() - 16..]
        .bytes()
        .all(|b| b.is_ascii_hexdigit())
    {
        return None;
    }
    let d = rustc_demangle::try_demangle(&sym[..len]).ok()?;
    Some(format!("{d:#}"))
}

fn cxx_demangle(sym: &str) -> Option<String> {
    if let Some(rest) = sym.strip_prefix("_GLOBAL_") {
        let b = rest.as_bytes();
        if b.len() >= 3 && b".$_".contains(&b[0]) && (b[1] == b'D' || b[1] == b'I') && b[2] == b'_'
        {
            let what = if b[1] == b'I' {
                "constructors"
            } else {
                "destructors"
            };
            let inner = &rest[3..];
            let inner = cxx_demangle(inner).unwrap_or_else(|| inner.to_owned());
            return Some(format!("global {what} keyed to {inner}"));
        }
        return None;
    }
    if !sym.starts_with("_Z") {
        return None;
    }
    if let Some(result) = cxa::demangle(sym) {
        return result;
    }
    // The crate has panicked on hostile names in the past; a name is never worth a crash.
    std::panic::catch_unwind(|| {
        let parsed = cpp_demangle::Symbol::new(sym.as_bytes()).ok()?;
        parsed.demangle().ok()
    })
    .ok()
    .flatten()
}

/// libiberty's C++ demangler as shipped in libstdc++ (`__cxa_demangle`), loaded with
/// `dlopen` so that nothing links against libstdc++. All the FFI of this crate is here.
pub mod cxa {
    use std::ffi::{c_char, c_int, CStr, CString};
    use std::sync::OnceLock;

    type CxaDemangle =
        unsafe extern "C" fn(*const c_char, *mut c_char, *mut usize, *mut c_int) -> *mut c_char;

    fn load() -> Option<CxaDemangle> {
        // SAFETY: dlopen with a constant NUL-terminated name; the handle is never closed, so
        // the function pointer taken from it stays valid for the life of the process.
        let handle = unsafe {
            libc::dlopen(
                c"libstdc++.so.6".as_ptr(),
                libc::RTLD_NOW | libc::RTLD_LOCAL,
            )
        };
        if handle.is_null() {
            return None;
        }
        // SAFETY: `handle` is a live handle and the symbol name is NUL-terminated.
        let sym = unsafe { libc::dlsym(handle, c"__cxa_demangle".as_ptr()) };
        if sym.is_null() {
            return None;
        }
        // SAFETY: `__cxa_demangle` has exactly this C signature in the Itanium C++ ABI.
        Some(unsafe { std::mem::transmute::<*mut libc::c_void, CxaDemangle>(sym) })
    }

    /// Whether libstdc++'s demangler could be loaded.
    pub fn available() -> bool {
        function().is_some()
    }

    fn function() -> Option<CxaDemangle> {
        static F: OnceLock<Option<CxaDemangle>> = OnceLock::new();
        *F.get_or_init(load)
    }

    /// `Some(Some(text))`: demangled; `Some(None)`: libiberty rejects the name; `None`: the
    /// library is not available.
    pub fn demangle(sym: &str) -> Option<Option<String>> {
        let f = function()?;
        let Ok(c) = CString::new(sym) else {
            return Some(None);
        };
        let mut status: c_int = 0;
        // SAFETY: `c` is NUL-terminated; a null buffer asks the callee to malloc the result,
        // which we free below; `status` is a valid out-pointer and the length pointer may be
        // null.
        let out = unsafe {
            f(
                c.as_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut status,
            )
        };
        if out.is_null() {
            return Some(None);
        }
        // SAFETY: on success `out` is a NUL-terminated string allocated with malloc.
        let text = unsafe { CStr::from_ptr(out) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: `out` came from malloc inside `__cxa_demangle` and is freed exactly once.
        unsafe { libc::free(out.cast()) };
        Some((status == 0).then_some(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_legacy_drops_hash_and_suffix() {
        assert_eq!(
            gprof_demangle("_ZN4core3fmt5write17h0123456789abcdefE").as_deref(),
            Some("core::fmt::write")
        );
        assert_eq!(
            gprof_demangle("_ZN4core3fmt5write17h0123456789abcdefE.llvm.42").as_deref(),
            Some("core::fmt::write")
        );
    }

    #[test]
    fn cxx_like_libiberty() {
        if !cxa::available() {
            return;
        }
        // cpp_demangle drops the `&&` of these pack-expanded parameters and misprints the
        // literal operator; libiberty (and gprof) do not.
        assert_eq!(
            gprof_demangle("_Z1fIJRiiEEvDpOT_").as_deref(),
            Some("void f<int&, int>(int&, int&&)")
        );
        assert_eq!(
            gprof_demangle("_Zli2_ky").as_deref(),
            Some("operator\"\" _k(unsigned long long)")
        );
        assert_eq!(
            gprof_demangle("_Z3foov.constprop.0").as_deref(),
            Some("foo() [clone .constprop.0]")
        );
    }

    #[test]
    fn gnat_and_dlang_styles() {
        let g = |n: &str| gprof_demangle_style(n, Style::Gnat);
        assert_eq!(g("pkg__sub__2").as_deref(), Some("pkg.sub"));
        assert_eq!(g("pkg__Oadd").as_deref(), Some("pkg.\"+\""));
        assert_eq!(g("_start").as_deref(), Some("<_start>"));
        assert_eq!(g("_ada_Foo").as_deref(), Some("<Foo>"));
        assert_eq!(g("main").as_deref(), Some("main"));
        let d = |n: &str| gprof_demangle_style(n, Style::Dlang);
        assert_eq!(d("_Dmain").as_deref(), Some("D main"));
        assert_eq!(
            d("_D3app5outerFiZ5innerFZv").as_deref(),
            Some("app.outer(int).inner()")
        );
        assert_eq!(d("_D3foo3barFZvv"), None);
        assert_eq!(d("main"), None);
        assert_eq!(
            d(".$_D3foo__T3barTiZ3barFZv@plt").as_deref(),
            Some(".$foo.bar!(int).bar()@plt")
        );
        assert_eq!(
            gprof_demangle_dlang(b"_D2\xc3\xa9i").as_deref(),
            Some(&b"\xc3\xa9"[..])
        );
        assert_eq!(gprof_demangle_dlang(b"_D1\xc3\xa9i"), None);
    }

    #[test]
    fn cxx_and_plain() {
        assert_eq!(gprof_demangle("_Z3fooi").as_deref(), Some("foo(int)"));
        assert_eq!(gprof_demangle("_ZN3FooC2Ev").as_deref(), Some("Foo::Foo()"));
        assert_eq!(gprof_demangle("main"), None);
        assert_eq!(
            gprof_demangle("_Z3fooi@plt").as_deref(),
            Some("foo(int)@plt")
        );
    }
}
