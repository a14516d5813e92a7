//! libiberty's `java_demangle_v3` (binutils 2.40): the Itanium C++ demangler of
//! `cp-demangle.c` run with `DMGL_JAVA | DMGL_PARAMS | DMGL_RET_POSTFIX`, written here after
//! its grammar and its printer (whole: every name libiberty demangles is demangled here the
//! same way, and every name it rejects is rejected).
//!
//! The name is parsed into libiberty's tree of components (an arena, [`Comp`]; substitutions
//! and template parameters share nodes, so it is a DAG), then printed by the same walk as
//! libiberty's `d_print_comp`: a stack of pending type modifiers (pointers, references,
//! qualifiers, function and array types print around the name they modify), the template
//! argument lists in scope for `T_`, pack expansions, expressions. Java changes the printing
//! only:
//!
//! * names are joined with `.` (the `std::` abbreviations keep their literal text, such as
//!   `std::allocator`), and `__U<hex>_` in an identifier is the character (below 256);
//! * builtin types take their Java names (`bool` is `boolean`, `char` is `byte`, `wchar_t` is
//!   `char`, `long long` is `long`, `unsigned int` is `unsigned`);
//! * pointers print no `*` (`int (*)()` is `int ()()`);
//! * the encoding's return type follows its parameters and qualifiers, with no space
//!   (`as<long>() constlong`); inner function types print the C++ way;
//! * `JArray<T>` prints as `T[]`; a `$` after an identifier is skipped.
//!
//! libiberty's limits are kept: a name of more than 1024 bytes is rejected, as are function
//! types nested more than 2048 deep and printing deeper than 1024 components. The grammar is
//! 2.40's (modules, structured bindings, `_FloatN`, `sr` read the current way then the old
//! one), checked against `c++filt -s java` 2.40. Two differences: where libiberty would run
//! for hours or exhaust memory, a name whose printing
//! passes [`MAX_OUTPUT`] bytes or [`MAX_STEPS`] steps (substitutions can double the text
//! at every level) is printed raw. And names are UTF-8 here: a `__U<hex>_` escape of a
//! character from 128 to 255, one byte in libiberty's output, is U+FFFD.

const DMGL_JAVA: u8 = 1;
const DMGL_RET_POSTFIX: u8 = 2;
const DMGL_RET_DROP: u8 = 4;

/// libiberty's `DEMANGLE_RECURSION_LIMIT`.
const RECURSION_LIMIT: usize = 2048;
/// libiberty's `MAX_RECURSION_COUNT` (printing depth).
const MAX_RECURSION_COUNT: usize = 1024;
/// Printing past this many bytes is given up (libiberty has no limit).
pub const MAX_OUTPUT: usize = 64 << 20;
/// Printing past this many component visits is given up (libiberty has no limit).
pub const MAX_STEPS: usize = 1 << 26;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum T {
    Name,
    TaggedName,
    QualName,
    LocalName,
    TypedName,
    Template,
    TemplateParam,
    TparmObj,
    FunctionParam,
    Ctor,
    Dtor,
    Vtable,
    Vtt,
    ConstructionVtable,
    Typeinfo,
    TypeinfoName,
    TypeinfoFn,
    Thunk,
    VirtualThunk,
    CovariantThunk,
    JavaClass,
    Guard,
    TlsInit,
    TlsWrapper,
    Reftemp,
    HiddenAlias,
    TransactionClone,
    NonTransactionClone,
    SubStd,
    Restrict,
    Volatile,
    Const,
    RestrictThis,
    VolatileThis,
    ConstThis,
    ReferenceThis,
    RvalueReferenceThis,
    TransactionSafe,
    Noexcept,
    ThrowSpec,
    VendorTypeQual,
    Pointer,
    Reference,
    RvalueReference,
    Complex,
    Imaginary,
    Builtin,
    ExtendedBuiltin,
    VendorType,
    FunctionType,
    ArrayType,
    PtrmemType,
    VectorType,
    Arglist,
    TemplateArglist,
    InitializerList,
    Operator,
    ExtendedOperator,
    Cast,
    Conversion,
    Nullary,
    Unary,
    Binary,
    BinaryArgs,
    Trinary,
    TrinaryArg1,
    TrinaryArg2,
    Literal,
    LiteralNeg,
    JavaResource,
    CompoundName,
    Character,
    Number,
    Decltype,
    GlobalConstructors,
    GlobalDestructors,
    Lambda,
    DefaultArg,
    UnnamedType,
    PackExpansion,
    Clone,
    ModuleName,
    ModulePartition,
    ModuleEntity,
    ModuleInit,
    StructuredBinding,
}

fn is_fnqual(t: T) -> bool {
    matches!(
        t,
        T::RestrictThis
            | T::VolatileThis
            | T::ConstThis
            | T::ReferenceThis
            | T::RvalueReferenceThis
            | T::TransactionSafe
            | T::Noexcept
            | T::ThrowSpec
    )
}

/// A component: its kind, its two children, a text (names, literal values) and a number
/// (builtin type or operator index, template parameter, lambda number, ctor kind…).
#[derive(Debug, Clone)]
struct Comp {
    t: T,
    l: Option<usize>,
    r: Option<usize>,
    s: Vec<u8>,
    n: i64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Print {
    Default,
    Int,
    Unsigned,
    Long,
    UnsignedLong,
    LongLong,
    UnsignedLongLong,
    Bool,
    Float,
    Void,
}

/// libiberty's builtin types: C++ name, Java name, literal printing.
const BUILTINS: [(&str, &str, Print); 36] = [
    ("signed char", "signed char", Print::Default),
    ("bool", "boolean", Print::Bool),
    ("char", "byte", Print::Default),
    ("double", "double", Print::Float),
    ("long double", "long double", Print::Float),
    ("float", "float", Print::Float),
    ("__float128", "__float128", Print::Float),
    ("unsigned char", "unsigned char", Print::Default),
    ("int", "int", Print::Int),
    ("unsigned int", "unsigned", Print::Unsigned),
    ("", "", Print::Default),
    ("long", "long", Print::Long),
    ("unsigned long", "unsigned long", Print::UnsignedLong),
    ("__int128", "__int128", Print::Default),
    ("unsigned __int128", "unsigned __int128", Print::Default),
    ("", "", Print::Default),
    ("", "", Print::Default),
    ("", "", Print::Default),
    ("short", "short", Print::Default),
    ("unsigned short", "unsigned short", Print::Default),
    ("", "", Print::Default),
    ("void", "void", Print::Void),
    ("wchar_t", "char", Print::Default),
    ("long long", "long", Print::LongLong),
    (
        "unsigned long long",
        "unsigned long long",
        Print::UnsignedLongLong,
    ),
    ("...", "...", Print::Default),
    ("decimal32", "decimal32", Print::Default),
    ("decimal64", "decimal64", Print::Default),
    ("decimal128", "decimal128", Print::Default),
    ("half", "half", Print::Float),
    ("char8_t", "char8_t", Print::Default),
    ("char16_t", "char16_t", Print::Default),
    ("char32_t", "char32_t", Print::Default),
    ("decltype(nullptr)", "decltype(nullptr)", Print::Default),
    ("_Float", "_Float", Print::Float),
    ("std::bfloat16_t", "std::bfloat16_t", Print::Default),
];

/// libiberty's operators (sorted by code): code, printed name, operand count.
const OPERATORS: &[(&[u8; 2], &str, i64)] = &[
    (b"aN", "&=", 2),
    (b"aS", "=", 2),
    (b"aa", "&&", 2),
    (b"ad", "&", 1),
    (b"an", "&", 2),
    (b"at", "alignof ", 1),
    (b"aw", "co_await ", 1),
    (b"az", "alignof ", 1),
    (b"cc", "const_cast", 2),
    (b"cl", "()", 2),
    (b"cm", ",", 2),
    (b"co", "~", 1),
    (b"dV", "/=", 2),
    (b"dX", "[...]=", 3),
    (b"da", "delete[] ", 1),
    (b"dc", "dynamic_cast", 2),
    (b"de", "*", 1),
    (b"di", "=", 2),
    (b"dl", "delete ", 1),
    (b"ds", ".*", 2),
    (b"dt", ".", 2),
    (b"dv", "/", 2),
    (b"dx", "]=", 2),
    (b"eO", "^=", 2),
    (b"eo", "^", 2),
    (b"eq", "==", 2),
    (b"fL", "...", 3),
    (b"fR", "...", 3),
    (b"fl", "...", 2),
    (b"fr", "...", 2),
    (b"ge", ">=", 2),
    (b"gs", "::", 1),
    (b"gt", ">", 2),
    (b"ix", "[]", 2),
    (b"lS", "<<=", 2),
    (b"le", "<=", 2),
    (b"li", "operator\"\" ", 1),
    (b"ls", "<<", 2),
    (b"lt", "<", 2),
    (b"mI", "-=", 2),
    (b"mL", "*=", 2),
    (b"mi", "-", 2),
    (b"ml", "*", 2),
    (b"mm", "--", 1),
    (b"na", "new[]", 3),
    (b"ne", "!=", 2),
    (b"ng", "-", 1),
    (b"nt", "!", 1),
    (b"nw", "new", 3),
    (b"nx", "noexcept", 1),
    (b"oR", "|=", 2),
    (b"oo", "||", 2),
    (b"or", "|", 2),
    (b"pL", "+=", 2),
    (b"pl", "+", 2),
    (b"pm", "->*", 2),
    (b"pp", "++", 1),
    (b"ps", "+", 1),
    (b"pt", "->", 2),
    (b"qu", "?", 3),
    (b"rM", "%=", 2),
    (b"rS", ">>=", 2),
    (b"rc", "reinterpret_cast", 2),
    (b"rm", "%", 2),
    (b"rs", ">>", 2),
    (b"sP", "sizeof...", 1),
    (b"sZ", "sizeof...", 1),
    (b"sc", "static_cast", 2),
    (b"ss", "<=>", 2),
    (b"st", "sizeof ", 1),
    (b"sz", "sizeof ", 1),
    (b"tr", "throw", 0),
    (b"tw", "throw ", 1),
];

/// The standard abbreviations: code, simple text, full text (before a constructor or
/// destructor), the name a constructor then takes.
const STANDARD_SUBS: [(u8, &str, &str, &str); 7] = [
    (b't', "std", "std", ""),
    (b'a', "std::allocator", "std::allocator", "allocator"),
    (
        b'b',
        "std::basic_string",
        "std::basic_string",
        "basic_string",
    ),
    (
        b's',
        "std::string",
        "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
        "basic_string",
    ),
    (
        b'i',
        "std::istream",
        "std::basic_istream<char, std::char_traits<char> >",
        "basic_istream",
    ),
    (
        b'o',
        "std::ostream",
        "std::basic_ostream<char, std::char_traits<char> >",
        "basic_ostream",
    ),
    (
        b'd',
        "std::iostream",
        "std::basic_iostream<char, std::char_traits<char> >",
        "basic_iostream",
    ),
];

struct Parser<'a> {
    s: &'a [u8],
    n: usize,
    comps: Vec<Comp>,
    num_comps: usize,
    subs: Vec<usize>,
    num_subs: usize,
    last_name: Option<usize>,
    is_expression: bool,
    is_conversion: bool,
    recursion_level: usize,
    /// `DMGL_JAVA`: a `$` after an identifier is skipped.
    java: bool,
    /// How `sr` reads: 1 the current mangling first, -1 it was tried (the name is parsed again
    /// the old way if it fails), 0 the old way (`sr <type> <name>`).
    unresolved_name_state: i8,
}

type P = Option<usize>;

impl<'a> Parser<'a> {
    fn peek(&self) -> u8 {
        self.s.get(self.n).copied().unwrap_or(0)
    }
    fn peek_next(&self) -> u8 {
        if self.peek() == 0 {
            return 0;
        }
        self.s.get(self.n + 1).copied().unwrap_or(0)
    }
    fn advance(&mut self, k: usize) {
        self.n = (self.n + k).min(self.s.len());
    }
    fn next_char(&mut self) -> u8 {
        let c = self.peek();
        if c != 0 {
            self.n += 1;
        }
        c
    }
    fn check(&mut self, c: u8) -> bool {
        if self.peek() == c {
            self.n += 1;
            true
        } else {
            false
        }
    }

    fn empty(&mut self, t: T) -> P {
        if self.comps.len() >= self.num_comps {
            return None;
        }
        self.comps.push(Comp {
            t,
            l: None,
            r: None,
            s: Vec::new(),
            n: 0,
        });
        Some(self.comps.len() - 1)
    }

    fn make(&mut self, t: T, l: P, r: P) -> P {
        use T::*;
        let ok = match t {
            QualName | LocalName | TypedName | TaggedName | Template | ConstructionVtable
            | VendorTypeQual | PtrmemType | Unary | Binary | BinaryArgs | Trinary | TrinaryArg1
            | Literal | LiteralNeg | CompoundName | VectorType | Clone | ModuleEntity => {
                l.is_some() && r.is_some()
            }
            Vtable | Vtt | Typeinfo | TypeinfoName | TypeinfoFn | Thunk | VirtualThunk
            | CovariantThunk | JavaClass | Guard | TlsInit | TlsWrapper | Reftemp | HiddenAlias
            | TransactionClone | NonTransactionClone | Pointer | Reference | RvalueReference
            | Complex | Imaginary | VendorType | Cast | Conversion | JavaResource | Decltype
            | PackExpansion | GlobalConstructors | GlobalDestructors | Nullary | TrinaryArg2
            | TparmObj | ModuleInit | StructuredBinding => l.is_some(),
            ArrayType | InitializerList | ModuleName | ModulePartition => r.is_some(),
            FunctionType | Restrict | Volatile | Const | Arglist | TemplateArglist => true,
            _ if is_fnqual(t) => true,
            _ => false,
        };
        if !ok {
            return None;
        }
        let p = self.empty(t)?;
        self.comps[p].l = l;
        self.comps[p].r = r;
        Some(p)
    }

    fn make_name(&mut self, s: &[u8]) -> P {
        if s.is_empty() {
            return None;
        }
        let p = self.empty(T::Name)?;
        self.comps[p].s = s.to_vec();
        Some(p)
    }

    fn make_num(&mut self, t: T, n: i64) -> P {
        let p = self.empty(t)?;
        self.comps[p].n = n;
        Some(p)
    }

    fn make_sub(&mut self, s: &str) -> P {
        let p = self.empty(T::SubStd)?;
        self.comps[p].s = s.as_bytes().to_vec();
        Some(p)
    }

    fn add_sub(&mut self, dc: P) -> bool {
        let Some(dc) = dc else { return false };
        if self.subs.len() >= self.num_subs {
            return false;
        }
        self.subs.push(dc);
        true
    }

    fn t(&self, p: usize) -> T {
        self.comps[p].t
    }

    /// `<mangled-name> ::= _Z <encoding> [<clone-suffix>]*`
    fn mangled_name(&mut self, top: bool) -> P {
        if !self.check(b'_') && top {
            return None;
        }
        if !self.check(b'Z') {
            return None;
        }
        let mut p = self.encoding(top);
        if top {
            while self.peek() == b'.'
                && (self.peek_next().is_ascii_lowercase()
                    || self.peek_next() == b'_'
                    || self.peek_next().is_ascii_digit())
            {
                p = self.clone_suffix(p);
            }
        }
        p
    }

    fn has_return_type(&self, dc: P) -> bool {
        let Some(dc) = dc else { return false };
        match self.t(dc) {
            T::LocalName => self.has_return_type(self.comps[dc].r),
            T::Template => !self.is_ctor_dtor_or_conversion(self.comps[dc].l),
            t if is_fnqual(t) => self.has_return_type(self.comps[dc].l),
            _ => false,
        }
    }

    fn is_ctor_dtor_or_conversion(&self, dc: P) -> bool {
        let Some(dc) = dc else { return false };
        match self.t(dc) {
            T::QualName | T::LocalName => self.is_ctor_dtor_or_conversion(self.comps[dc].r),
            T::Ctor | T::Dtor | T::Conversion => true,
            _ => false,
        }
    }

    fn encoding(&mut self, top: bool) -> P {
        let peek = self.peek();
        if peek == b'G' || peek == b'T' {
            return self.special_name();
        }
        let dc = self.name(false)?;
        let peek = self.peek();
        if peek != 0 && peek != b'E' {
            let has_ret = self.has_return_type(Some(dc));
            let ftype = self.bare_function_type(has_ret)?;
            if !top && self.t(dc) == T::LocalName && self.t(ftype) == T::FunctionType {
                self.comps[ftype].l = None;
            }
            return self.make(T::TypedName, Some(dc), Some(ftype));
        }
        Some(dc)
    }

    fn abi_tags(&mut self, mut dc: P) -> P {
        let hold = self.last_name;
        while self.peek() == b'B' {
            self.advance(1);
            let tag = self.source_name();
            dc = self.make(T::TaggedName, dc, tag);
        }
        self.last_name = hold;
        dc
    }

    /// `<name>`; `substable`: a type's name, itself a substitution candidate (unless it is
    /// one already).
    fn name(&mut self, substable: bool) -> P {
        let mut subst = false;
        let dc = match self.peek() {
            b'N' => self.nested_name(),
            b'Z' => self.local_name(),
            b'U' => self.unqualified_name(None, None),
            c => {
                let mut dc = None;
                let mut module = None;
                if c == b'S' {
                    if self.peek_next() == b't' {
                        self.advance(2);
                        dc = self.make_name(b"std");
                    }
                    if self.peek() == b'S' {
                        let m = self.substitution(false)?;
                        if matches!(self.t(m), T::ModuleName | T::ModulePartition) {
                            module = Some(m);
                        } else {
                            if dc.is_some() {
                                return None;
                            }
                            subst = true;
                            dc = Some(m);
                        }
                    }
                }
                if !subst {
                    dc = self.unqualified_name(dc, module);
                }
                if self.peek() == b'I' {
                    if !subst && !self.add_sub(dc) {
                        return None;
                    }
                    let args = self.template_args();
                    dc = self.make(T::Template, dc, args);
                    subst = false;
                }
                dc
            }
        };
        if substable && !subst && !self.add_sub(dc) {
            return None;
        }
        dc
    }

    fn nested_name(&mut self) -> P {
        if !self.check(b'N') {
            return None;
        }
        let (mut ret, hole) = self.cv_qualifiers(true)?;
        let rqual = self.ref_qualifier(None);
        let prefix = self.prefix(true)?;
        match hole {
            Some(h) => self.comps[h].l = Some(prefix),
            None => ret = Some(prefix),
        }
        if let Some(rq) = rqual {
            self.comps[rq].l = ret;
            ret = Some(rq);
        }
        if !self.check(b'E') {
            return None;
        }
        ret
    }

    fn prefix(&mut self, substable: bool) -> P {
        let mut ret: P = None;
        loop {
            let peek = self.peek();
            if peek == b'D' && matches!(self.peek_next(), b'T' | b't') {
                if ret.is_some() {
                    return None;
                }
                ret = self.typ();
            } else if peek == b'I' {
                ret?;
                let dc = self.template_args()?;
                ret = self.make(T::Template, ret, Some(dc));
            } else if peek == b'T' {
                if ret.is_some() {
                    return None;
                }
                ret = self.template_param();
            } else if peek == b'M' {
                self.advance(1);
                continue;
            } else {
                let mut module = None;
                if peek == b'S' {
                    let m = self.substitution(true)?;
                    if matches!(self.t(m), T::ModuleName | T::ModulePartition) {
                        module = Some(m);
                    } else {
                        if ret.is_some() {
                            return None;
                        }
                        ret = Some(m);
                        continue;
                    }
                }
                ret = self.unqualified_name(ret, module);
            }
            ret?;
            if self.peek() == b'E' {
                break;
            }
            if substable && !self.add_sub(ret) {
                return None;
            }
        }
        ret
    }

    fn maybe_module_name(&mut self, name: &mut P) -> bool {
        while self.peek() == b'W' {
            self.advance(1);
            let mut code = T::ModuleName;
            if self.peek() == b'P' {
                code = T::ModulePartition;
                self.advance(1);
            }
            let sn = self.source_name();
            *name = self.make(code, *name, sn);
            if name.is_none() || !self.add_sub(*name) {
                return false;
            }
        }
        true
    }

    fn unqualified_name(&mut self, scope: P, mut module: P) -> P {
        if !self.maybe_module_name(&mut module) {
            return None;
        }
        let peek = self.peek();
        let mut ret;
        if peek.is_ascii_digit() {
            ret = self.source_name();
        } else if peek.is_ascii_lowercase() {
            let was_expr = self.is_expression;
            if peek == b'o' && self.peek_next() == b'n' {
                self.advance(2);
                self.is_expression = false;
            }
            ret = self.operator_name();
            self.is_expression = was_expr;
            if let Some(r) = ret {
                if self.t(r) == T::Operator && OPERATORS[self.comps[r].n as usize].0 == b"li" {
                    let sn = self.source_name();
                    ret = self.make(T::Unary, ret, sn);
                }
            }
        } else if peek == b'D' && self.peek_next() == b'C' {
            self.advance(2);
            let mut first = None;
            let mut prev: P = None;
            loop {
                let sn = self.source_name();
                let next = self.make(T::StructuredBinding, sn, None);
                match prev {
                    Some(p) => self.comps[p].r = next,
                    None => first = next,
                }
                prev = next;
                if prev.is_none() || self.peek() == b'E' {
                    break;
                }
            }
            if prev.is_some() {
                self.advance(1);
                ret = first;
            } else {
                ret = None;
            }
        } else if peek == b'C' || peek == b'D' {
            ret = self.ctor_dtor_name();
        } else if peek == b'L' {
            self.advance(1);
            ret = self.source_name();
            ret?;
            if !self.discriminator() {
                return None;
            }
        } else if peek == b'U' {
            ret = match self.peek_next() {
                b'l' => self.lambda(),
                b't' => self.unnamed_type(),
                _ => return None,
            };
        } else {
            return None;
        }
        if module.is_some() {
            ret = self.make(T::ModuleEntity, ret, module);
        }
        if self.peek() == b'B' {
            ret = self.abi_tags(ret);
        }
        if scope.is_some() {
            ret = self.make(T::QualName, scope, ret);
        }
        ret
    }

    fn source_name(&mut self) -> P {
        let len = self.number();
        if len <= 0 {
            return None;
        }
        let ret = self.identifier(len as usize);
        self.last_name = ret;
        ret
    }

    fn number(&mut self) -> i64 {
        let mut negative = false;
        if self.peek() == b'n' {
            negative = true;
            self.advance(1);
        }
        let mut ret: i64 = 0;
        loop {
            let c = self.peek();
            if !c.is_ascii_digit() {
                return if negative { -ret } else { ret };
            }
            let d = i64::from(c - b'0');
            if ret > (i64::from(i32::MAX) - d) / 10 {
                return -1;
            }
            ret = ret * 10 + d;
            self.advance(1);
        }
    }

    fn identifier(&mut self, len: usize) -> P {
        let start = self.n;
        if self.s.len() - start < len {
            return None;
        }
        self.advance(len);
        if self.java && self.peek() == b'$' {
            self.advance(1);
        }
        let name = &self.s[start..start + len];
        if len >= 10 && name.starts_with(b"_GLOBAL_") {
            let c = name[8];
            if matches!(c, b'.' | b'_' | b'$') && name[9] == b'N' {
                return self.make_name(b"(anonymous namespace)");
            }
        }
        self.make_name(name)
    }

    fn operator_name(&mut self) -> P {
        let c1 = self.next_char();
        let c2 = self.next_char();
        if c1 == b'v' && c2.is_ascii_digit() {
            let sn = self.source_name();
            let p = self.empty(T::ExtendedOperator)?;
            sn?;
            self.comps[p].n = i64::from(c2 - b'0');
            self.comps[p].l = sn;
            Some(p)
        } else if c1 == b'c' && c2 == b'v' {
            let was = self.is_conversion;
            self.is_conversion = !self.is_expression;
            let ty = self.typ();
            let res = if self.is_conversion {
                self.make(T::Conversion, ty, None)
            } else {
                self.make(T::Cast, ty, None)
            };
            self.is_conversion = was;
            res
        } else {
            let i = OPERATORS
                .binary_search_by(|(code, _, _)| code[..].cmp(&[c1, c2][..]))
                .ok()?;
            self.make_num(T::Operator, i as i64)
        }
    }

    fn java_resource(&mut self) -> P {
        let mut len = self.number();
        if len <= 1 {
            return None;
        }
        if self.next_char() != b'_' {
            return None;
        }
        len -= 1;
        let mut p: P = None;
        while len > 0 {
            let c = self.peek();
            if c == 0 {
                return None;
            }
            let next;
            if c == b'$' {
                let e = self.s.get(self.n + 1).copied().unwrap_or(0);
                let ch = match e {
                    b'S' => b'/',
                    b'_' => b'.',
                    b'$' => b'$',
                    _ => return None,
                };
                next = self.make_num(T::Character, i64::from(ch));
                self.advance(2);
                len -= 2;
                next?;
            } else {
                let mut i = 0usize;
                while (i as i64) < len {
                    let ch = self.s.get(self.n + i).copied().unwrap_or(0);
                    if ch == 0 || ch == b'$' {
                        break;
                    }
                    i += 1;
                }
                let text = self.s[self.n..self.n + i].to_vec();
                next = self.make_name(&text);
                self.advance(i);
                len -= i as i64;
                next?;
            }
            p = match p {
                None => next,
                Some(_) => Some(self.make(T::CompoundName, p, next)?),
            };
        }
        self.make(T::JavaResource, p, None)
    }

    fn special_name(&mut self) -> P {
        if self.check(b'T') {
            match self.next_char() {
                b'V' => {
                    let t = self.typ();
                    self.make(T::Vtable, t, None)
                }
                b'T' => {
                    let t = self.typ();
                    self.make(T::Vtt, t, None)
                }
                b'I' => {
                    let t = self.typ();
                    self.make(T::Typeinfo, t, None)
                }
                b'S' => {
                    let t = self.typ();
                    self.make(T::TypeinfoName, t, None)
                }
                b'h' => {
                    if !self.call_offset(b'h') {
                        return None;
                    }
                    let e = self.encoding(false);
                    self.make(T::Thunk, e, None)
                }
                b'v' => {
                    if !self.call_offset(b'v') {
                        return None;
                    }
                    let e = self.encoding(false);
                    self.make(T::VirtualThunk, e, None)
                }
                b'c' => {
                    if !self.call_offset(0) || !self.call_offset(0) {
                        return None;
                    }
                    let e = self.encoding(false);
                    self.make(T::CovariantThunk, e, None)
                }
                b'C' => {
                    let derived = self.typ();
                    let offset = self.number();
                    if offset < 0 || !self.check(b'_') {
                        return None;
                    }
                    let base = self.typ();
                    self.make(T::ConstructionVtable, base, derived)
                }
                b'F' => {
                    let t = self.typ();
                    self.make(T::TypeinfoFn, t, None)
                }
                b'J' => {
                    let t = self.typ();
                    self.make(T::JavaClass, t, None)
                }
                b'H' => {
                    let n = self.name(false);
                    self.make(T::TlsInit, n, None)
                }
                b'W' => {
                    let n = self.name(false);
                    self.make(T::TlsWrapper, n, None)
                }
                b'A' => {
                    let a = self.template_arg();
                    self.make(T::TparmObj, a, None)
                }
                _ => None,
            }
        } else if self.check(b'G') {
            match self.next_char() {
                b'V' => {
                    let n = self.name(false);
                    self.make(T::Guard, n, None)
                }
                b'R' => {
                    let name = self.name(false);
                    let num = self.number();
                    let nc = self.make_num(T::Number, num);
                    self.make(T::Reftemp, name, nc)
                }
                b'A' => {
                    let e = self.encoding(false);
                    self.make(T::HiddenAlias, e, None)
                }
                b'T' => {
                    if self.next_char() == b'n' {
                        let e = self.encoding(false);
                        self.make(T::NonTransactionClone, e, None)
                    } else {
                        let e = self.encoding(false);
                        self.make(T::TransactionClone, e, None)
                    }
                }
                b'r' => self.java_resource(),
                b'I' => {
                    let mut module = None;
                    if !self.maybe_module_name(&mut module) {
                        return None;
                    }
                    module?;
                    self.make(T::ModuleInit, module, None)
                }
                _ => None,
            }
        } else {
            None
        }
    }

    fn call_offset(&mut self, c: u8) -> bool {
        let c = if c == 0 { self.next_char() } else { c };
        if c == b'h' {
            self.number();
        } else if c == b'v' {
            self.number();
            if !self.check(b'_') {
                return false;
            }
            self.number();
        } else {
            return false;
        }
        self.check(b'_')
    }

    fn ctor_dtor_name(&mut self) -> P {
        match self.peek() {
            b'C' => {
                let mut inheriting = false;
                if self.peek_next() == b'I' {
                    inheriting = true;
                    self.advance(1);
                }
                let kind = match self.peek_next() {
                    c @ b'1'..=b'5' => i64::from(c - b'0'),
                    _ => return None,
                };
                self.advance(2);
                if inheriting {
                    self.typ();
                }
                let name = self.last_name?;
                let p = self.make_num(T::Ctor, kind)?;
                self.comps[p].l = Some(name);
                Some(p)
            }
            b'D' => {
                let kind = match self.peek_next() {
                    c @ (b'0' | b'1' | b'2' | b'4' | b'5') => i64::from(c - b'0'),
                    _ => return None,
                };
                self.advance(2);
                let name = self.last_name?;
                let p = self.make_num(T::Dtor, kind)?;
                self.comps[p].l = Some(name);
                Some(p)
            }
            _ => None,
        }
    }

    fn next_is_type_qual(&self) -> bool {
        let peek = self.peek();
        if matches!(peek, b'r' | b'V' | b'K') {
            return true;
        }
        peek == b'D' && matches!(self.peek_next(), b'x' | b'o' | b'O' | b'w')
    }

    fn builtin(&mut self, i: usize) -> P {
        self.make_num(T::Builtin, i as i64)
    }

    fn typ(&mut self) -> P {
        if self.next_is_type_qual() {
            let (mut ret, hole) = self.cv_qualifiers(false)?;
            let inner = if self.peek() == b'F' {
                self.function_type()
            } else {
                self.typ()
            };
            let inner = inner?;
            let hole = hole?;
            self.comps[hole].l = Some(inner);
            if matches!(self.t(inner), T::RvalueReferenceThis | T::ReferenceThis) {
                let fnc = self.comps[inner].l;
                self.comps[inner].l = ret;
                ret = Some(inner);
                self.comps[hole].l = fnc;
            }
            if !self.add_sub(ret) {
                return None;
            }
            return ret;
        }
        let mut can_subst = true;
        let peek = self.peek();
        let ret;
        match peek {
            b'a'..=b'j' | b'l' | b'm' | b'n' | b'o' | b's' | b't' | b'v'..=b'z' => {
                ret = self.builtin(usize::from(peek - b'a'));
                can_subst = false;
                self.advance(1);
            }
            b'u' => {
                self.advance(1);
                let sn = self.source_name();
                ret = self.make(T::VendorType, sn, None);
            }
            b'F' => ret = self.function_type(),

            b'A' => ret = self.array_type(),
            b'M' => ret = self.pointer_to_member_type(),
            b'T' => {
                let mut r = self.template_param();
                if self.peek() == b'I' {
                    if !self.is_conversion {
                        if !self.add_sub(r) {
                            return None;
                        }
                        let args = self.template_args();
                        r = self.make(T::Template, r, args);
                    } else {
                        let (n, comps, subs) = (self.n, self.comps.len(), self.subs.len());
                        let args = self.template_args();
                        if self.peek() == b'I' {
                            if !self.add_sub(r) {
                                return None;
                            }
                            r = self.make(T::Template, r, args);
                        } else {
                            self.n = n;
                            self.comps.truncate(comps);
                            self.subs.truncate(subs);
                        }
                    }
                }
                ret = r;
            }

            b'O' | b'P' | b'R' | b'C' | b'G' => {
                self.advance(1);
                let t = match peek {
                    b'O' => T::RvalueReference,
                    b'P' => T::Pointer,
                    b'R' => T::Reference,
                    b'C' => T::Complex,
                    _ => T::Imaginary,
                };
                let inner = self.typ();
                ret = self.make(t, inner, None);
            }
            b'U' => {
                self.advance(1);
                let mut q = self.source_name();
                if self.peek() == b'I' {
                    let args = self.template_args();
                    q = self.make(T::Template, q, args);
                }
                let inner = self.typ();
                ret = self.make(T::VendorTypeQual, inner, q);
            }
            b'D' => {
                can_subst = false;
                self.advance(1);
                let c = self.next_char();
                match c {
                    b'T' | b't' => {
                        let e = self.expression();
                        let mut r = self.make(T::Decltype, e, None);
                        if r.is_some() && self.next_char() != b'E' {
                            r = None;
                        }
                        ret = r;
                        can_subst = true;
                    }
                    b'p' => {
                        let inner = self.typ();
                        ret = self.make(T::PackExpansion, inner, None);
                        can_subst = true;
                    }
                    b'a' => ret = self.make_name(b"auto"),
                    b'c' => ret = self.make_name(b"decltype(auto)"),
                    b'f' => ret = self.builtin(26),
                    b'd' => ret = self.builtin(27),
                    b'e' => ret = self.builtin(28),
                    b'h' => ret = self.builtin(29),
                    b'u' => ret = self.builtin(30),
                    b's' => ret = self.builtin(31),
                    b'i' => ret = self.builtin(32),
                    b'F' => {
                        let arg = self.number();
                        if self.peek() == b'b' {
                            if arg != 16 {
                                return None;
                            }
                            self.advance(1);
                            ret = self.builtin(35);
                        } else {
                            let suffix = self.peek() == b'x';
                            if !suffix && self.peek() != b'_' {
                                return None;
                            }
                            let r = self.make_num(T::ExtendedBuiltin, arg);
                            if let Some(r) = r {
                                if suffix {
                                    self.comps[r].s = b"x".to_vec();
                                }
                            }
                            self.advance(1);
                            ret = r;
                        }
                    }
                    b'v' => {
                        ret = self.vector_type();
                        can_subst = true;
                    }
                    b'n' => ret = self.builtin(33),
                    _ => return None,
                }
            }
            // Anything else is a class or enum's name (digits, `N`, `Z`, `W`, substitutions
            // and abbreviations, but also `L` and an operator's code), a substitution
            // candidate unless it is one already.
            _ => {
                ret = self.name(true);
                can_subst = false;
            }
        }
        if can_subst && !self.add_sub(ret) {
            return None;
        }
        ret
    }

    /// `<CV-qualifiers>`: the outermost qualifier (or `None`) and the innermost one, whose
    /// left child is still to be filled (`None`: no qualifiers, the caller fills `ret`).
    fn cv_qualifiers(&mut self, member_fn: bool) -> Option<(P, P)> {
        let mut ret: P = None;
        let mut hole: P = None;
        let mut chain = Vec::new();
        let mut peek = self.peek();
        while self.next_is_type_qual() {
            let mut right = None;
            self.advance(1);
            let t = if peek == b'r' {
                if member_fn {
                    T::RestrictThis
                } else {
                    T::Restrict
                }
            } else if peek == b'V' {
                if member_fn {
                    T::VolatileThis
                } else {
                    T::Volatile
                }
            } else if peek == b'K' {
                if member_fn {
                    T::ConstThis
                } else {
                    T::Const
                }
            } else {
                let c = self.next_char();
                if c == b'x' {
                    T::TransactionSafe
                } else if c == b'o' || c == b'O' {
                    if c == b'O' {
                        right = Some(self.expression()?);
                        if !self.check(b'E') {
                            return None;
                        }
                    }
                    T::Noexcept
                } else if c == b'w' {
                    right = Some(self.parmlist()?);
                    if !self.check(b'E') {
                        return None;
                    }
                    T::ThrowSpec
                } else {
                    return None;
                }
            };
            let q = self.make(t, None, right)?;
            match hole {
                Some(h) => self.comps[h].l = Some(q),
                None => ret = Some(q),
            }
            hole = Some(q);
            chain.push(q);
            peek = self.peek();
        }
        if !member_fn && peek == b'F' {
            for q in chain {
                self.comps[q].t = match self.comps[q].t {
                    T::Restrict => T::RestrictThis,
                    T::Volatile => T::VolatileThis,
                    T::Const => T::ConstThis,
                    t => t,
                };
            }
        }
        Some((ret, hole))
    }

    fn ref_qualifier(&mut self, sub: P) -> P {
        let peek = self.peek();
        if peek == b'R' || peek == b'O' {
            let t = if peek == b'R' {
                T::ReferenceThis
            } else {
                T::RvalueReferenceThis
            };
            self.advance(1);
            return self.make(t, sub, None);
        }
        sub
    }

    fn function_type(&mut self) -> P {
        if self.recursion_level > RECURSION_LIMIT {
            return None;
        }
        self.recursion_level += 1;
        let mut ret = None;
        if self.check(b'F') {
            if self.peek() == b'Y' {
                self.advance(1);
            }
            ret = self.bare_function_type(true);
            ret = self.ref_qualifier(ret);
            if !self.check(b'E') {
                ret = None;
            }
        }
        self.recursion_level -= 1;
        ret
    }

    fn parmlist(&mut self) -> P {
        let mut items = Vec::new();
        loop {
            let peek = self.peek();
            if peek == 0 || peek == b'E' || peek == b'.' {
                break;
            }
            if (peek == b'R' || peek == b'O') && self.peek_next() == b'E' {
                break;
            }
            let t = self.typ()?;
            let node = self.make(T::Arglist, Some(t), None)?;
            items.push(node);
        }
        let first = *items.first()?;
        for w in items.windows(2) {
            self.comps[w[0]].r = Some(w[1]);
        }
        if items.len() == 1 {
            let l = self.comps[first].l.unwrap_or(0);
            if self.t(l) == T::Builtin && BUILTINS[self.comps[l].n as usize].2 == Print::Void {
                self.comps[first].l = None;
            }
        }
        Some(first)
    }

    fn bare_function_type(&mut self, mut has_ret: bool) -> P {
        if self.peek() == b'J' {
            self.advance(1);
            has_ret = true;
        }
        let ret = if has_ret { Some(self.typ()?) } else { None };
        let tl = self.parmlist()?;
        self.make(T::FunctionType, ret, Some(tl))
    }

    fn array_type(&mut self) -> P {
        if !self.check(b'A') {
            return None;
        }
        let peek = self.peek();
        let dim = if peek == b'_' {
            None
        } else if peek.is_ascii_digit() {
            let start = self.n;
            while self.peek().is_ascii_digit() {
                self.advance(1);
            }
            let text = self.s[start..self.n].to_vec();
            Some(self.make_name(&text)?)
        } else {
            Some(self.expression()?)
        };
        if !self.check(b'_') {
            return None;
        }
        let t = self.typ();
        self.make(T::ArrayType, dim, t)
    }

    fn vector_type(&mut self) -> P {
        let dim = if self.peek() == b'_' {
            self.advance(1);
            self.expression()
        } else {
            let num = self.number();
            self.make_num(T::Number, num)
        };
        dim?;
        if !self.check(b'_') {
            return None;
        }
        let t = self.typ();
        self.make(T::VectorType, dim, t)
    }

    fn pointer_to_member_type(&mut self) -> P {
        if !self.check(b'M') {
            return None;
        }
        let cl = self.typ()?;
        let mem = self.typ()?;
        self.make(T::PtrmemType, Some(cl), Some(mem))
    }

    fn compact_number(&mut self) -> i64 {
        let num = if self.peek() == b'_' {
            0
        } else if self.peek() == b'n' {
            return -1;
        } else {
            self.number() + 1
        };
        if num < 0 || !self.check(b'_') {
            return -1;
        }
        num
    }

    fn template_param(&mut self) -> P {
        if !self.check(b'T') {
            return None;
        }
        let param = self.compact_number();
        if param < 0 {
            return None;
        }
        self.make_num(T::TemplateParam, param)
    }

    fn template_args(&mut self) -> P {
        if self.peek() != b'I' && self.peek() != b'J' {
            return None;
        }
        self.advance(1);
        self.template_args_1()
    }

    fn template_args_1(&mut self) -> P {
        let hold = self.last_name;
        if self.peek() == b'E' {
            self.advance(1);
            return self.make(T::TemplateArglist, None, None);
        }
        let mut items = Vec::new();
        loop {
            let a = self.template_arg()?;
            items.push(self.make(T::TemplateArglist, Some(a), None)?);
            if self.peek() == b'E' {
                self.advance(1);
                break;
            }
        }
        for w in items.windows(2) {
            self.comps[w[0]].r = Some(w[1]);
        }
        self.last_name = hold;
        items.first().copied()
    }

    fn template_arg(&mut self) -> P {
        match self.peek() {
            b'X' => {
                self.advance(1);
                let ret = self.expression();
                if !self.check(b'E') {
                    return None;
                }
                ret
            }
            b'L' => self.expr_primary(),
            b'I' | b'J' => self.template_args(),
            _ => self.typ(),
        }
    }

    fn exprlist(&mut self, terminator: u8) -> P {
        if self.peek() == terminator {
            self.advance(1);
            return self.make(T::Arglist, None, None);
        }
        let mut items = Vec::new();
        loop {
            let arg = self.expression()?;
            items.push(self.make(T::Arglist, Some(arg), None)?);
            if self.peek() == terminator {
                self.advance(1);
                break;
            }
        }
        for w in items.windows(2) {
            self.comps[w[0]].r = Some(w[1]);
        }
        items.first().copied()
    }

    fn op_code(&self, op: usize) -> &'static [u8; 2] {
        OPERATORS[self.comps[op].n as usize].0
    }

    fn expression_1(&mut self) -> P {
        let peek = self.peek();
        let next = self.peek_next();
        if peek == b'L' {
            self.expr_primary()
        } else if peek == b'T' {
            self.template_param()
        } else if peek == b's' && next == b'r' {
            self.unresolved_name()
        } else if peek == b's' && next == b'p' {
            self.advance(2);
            let e = self.expression_1();
            self.make(T::PackExpansion, e, None)
        } else if peek == b'f' && next == b'p' {
            self.advance(2);
            let index = if self.peek() == b'T' {
                self.advance(1);
                0
            } else {
                let i = self.compact_number();
                if i == i64::from(i32::MAX) || i == -1 {
                    return None;
                }
                i + 1
            };
            self.make_num(T::FunctionParam, index)
        } else if peek.is_ascii_digit() || (peek == b'o' && next == b'n') {
            if peek == b'o' {
                self.advance(2);
            }
            let name = self.unqualified_name(None, None)?;
            if self.peek() == b'I' {
                let args = self.template_args();
                self.make(T::Template, Some(name), args)
            } else {
                Some(name)
            }
        } else if (peek == b'i' || peek == b't') && next == b'l' {
            self.advance(2);
            let mut ty = None;
            if peek == b't' {
                ty = self.typ();
            }
            if self.peek() == 0 || self.peek_next() == 0 {
                return None;
            }
            let list = self.exprlist(b'E');
            self.make(T::InitializerList, ty, list)
        } else {
            let op = self.operator_name()?;
            let mut code: Option<&'static [u8; 2]> = None;
            if self.t(op) == T::Operator {
                let c = self.op_code(op);
                code = Some(c);
                if c == b"st" {
                    let t = self.typ();
                    return self.make(T::Unary, Some(op), t);
                }
            }
            let args = match self.t(op) {
                T::Operator => OPERATORS[self.comps[op].n as usize].2,
                T::ExtendedOperator => self.comps[op].n,
                T::Cast => 1,
                _ => return None,
            };
            match args {
                0 => self.make(T::Nullary, Some(op), None),
                1 => {
                    let mut suffix = false;
                    if let Some(c) = code {
                        if (c[0] == b'p' || c[0] == b'm') && c[1] == c[0] {
                            suffix = !self.check(b'_');
                        }
                    }
                    let mut operand = if self.t(op) == T::Cast && self.check(b'_') {
                        self.exprlist(b'E')
                    } else if code == Some(b"sP") {
                        self.template_args_1()
                    } else {
                        self.expression_1()
                    };
                    if suffix {
                        operand = self.make(T::BinaryArgs, operand, operand);
                    }
                    self.make(T::Unary, Some(op), operand)
                }
                2 => {
                    let c = code?;
                    let left = if matches!(c, [b's' | b'd' | b'c' | b'r', b'c']) {
                        self.typ()
                    } else if c[0] == b'f' {
                        self.operator_name()
                    } else if c == b"di" {
                        self.unqualified_name(None, None)
                    } else {
                        self.expression_1()
                    };
                    let right = if c == b"cl" {
                        self.exprlist(b'E')
                    } else if c == b"dt" || c == b"pt" {
                        let mut r = self.unqualified_name(None, None);
                        if self.peek() == b'I' {
                            let args = self.template_args();
                            r = self.make(T::Template, r, args);
                        }
                        r
                    } else {
                        self.expression_1()
                    };
                    let ba = self.make(T::BinaryArgs, left, right);
                    self.make(T::Binary, Some(op), ba)
                }
                3 => {
                    let c = code?;
                    let (first, second, third);
                    if c == b"qu" || c == b"dX" {
                        first = self.expression_1();
                        second = self.expression_1();
                        third = self.expression_1();
                        third?;
                    } else if c[0] == b'f' {
                        first = self.operator_name();
                        second = self.expression_1();
                        third = self.expression_1();
                        third?;
                    } else if c[0] == b'n' {
                        if c[1] != b'w' && c[1] != b'a' {
                            return None;
                        }
                        first = self.exprlist(b'_');
                        second = self.typ();
                        if self.peek() == b'E' {
                            self.advance(1);
                            third = None;
                        } else if self.peek() == b'p' && self.peek_next() == b'i' {
                            self.advance(2);
                            third = self.exprlist(b'E');
                        } else if self.peek() == b'i' && self.peek_next() == b'l' {
                            third = self.expression_1();
                        } else {
                            return None;
                        }
                    } else {
                        return None;
                    }
                    let a2 = self.make(T::TrinaryArg2, second, third);
                    let a1 = self.make(T::TrinaryArg1, first, a2);
                    self.make(T::Trinary, Some(op), a1)
                }
                _ => None,
            }
        }
    }

    /// `sr`: a qualified name in an expression, `sr <prefix> E <name>` (tried first) or the
    /// older `sr <type> <name>`.
    fn unresolved_name(&mut self) -> P {
        self.advance(2);
        let peek = self.peek();
        let ty = if self.unresolved_name_state != 0
            && (peek.is_ascii_digit()
                || peek.is_ascii_lowercase()
                || matches!(peek, b'C' | b'U' | b'L'))
        {
            self.unresolved_name_state = -1;
            let t = self.prefix(false);
            if self.peek() == b'E' {
                self.advance(1);
            }
            t
        } else {
            self.typ()
        };
        let mut name = self.unqualified_name(ty, None);
        if self.peek() == b'I' {
            let args = self.template_args();
            name = self.make(T::Template, name, args);
        }
        name
    }

    fn expression(&mut self) -> P {
        let was = self.is_expression;
        self.is_expression = true;
        let ret = self.expression_1();
        self.is_expression = was;
        ret
    }

    fn expr_primary(&mut self) -> P {
        if !self.check(b'L') {
            return None;
        }
        let ret;
        if self.peek() == b'_' || self.peek() == b'Z' {
            ret = self.mangled_name(false);
        } else {
            let ty = self.typ()?;
            if self.t(ty) == T::Builtin && self.comps[ty].n == 33 && self.peek() == b'E' {
                self.advance(1);
                return Some(ty);
            }
            let mut t = T::Literal;
            if self.peek() == b'n' {
                t = T::LiteralNeg;
                self.advance(1);
            }
            let start = self.n;
            while self.peek() != b'E' {
                if self.peek() == 0 {
                    return None;
                }
                self.advance(1);
            }
            let text = self.s[start..self.n].to_vec();
            let name = self.make_name(&text);
            ret = self.make(t, Some(ty), name);
        }
        if !self.check(b'E') {
            return None;
        }
        ret
    }

    fn local_name(&mut self) -> P {
        if !self.check(b'Z') {
            return None;
        }
        let function = self.encoding(false)?;
        if !self.check(b'E') {
            return None;
        }
        let name;
        if self.peek() == b's' {
            self.advance(1);
            if !self.discriminator() {
                return None;
            }
            name = self.make_name(b"string literal");
        } else {
            let mut num = -1;
            if self.peek() == b'd' {
                self.advance(1);
                num = self.compact_number();
                if num < 0 {
                    return None;
                }
            }
            let mut nm = self.name(false);
            if let Some(n) = nm {
                if !matches!(self.t(n), T::Lambda | T::UnnamedType) && !self.discriminator() {
                    return None;
                }
            }
            if num >= 0 {
                let sub = nm;
                nm = self.make_num(T::DefaultArg, num);
                if let Some(d) = nm {
                    self.comps[d].l = sub;
                }
            }
            name = nm;
        }
        if self.t(function) == T::TypedName {
            if let Some(r) = self.comps[function].r {
                if self.t(r) == T::FunctionType {
                    self.comps[r].l = None;
                }
            }
        }
        self.make(T::LocalName, Some(function), name)
    }

    fn discriminator(&mut self) -> bool {
        if self.peek() != b'_' {
            return true;
        }
        self.advance(1);
        let mut underscores = 1;
        if self.peek() == b'_' {
            underscores += 1;
            self.advance(1);
        }
        let d = self.number();
        if d < 0 {
            return false;
        }
        if underscores > 1 && d >= 10 {
            if self.peek() == b'_' {
                self.advance(1);
            } else {
                return false;
            }
        }
        true
    }

    fn lambda(&mut self) -> P {
        if !self.check(b'U') || !self.check(b'l') {
            return None;
        }
        let tl = self.parmlist()?;
        if !self.check(b'E') {
            return None;
        }
        let num = self.compact_number();
        if num < 0 {
            return None;
        }
        let p = self.make_num(T::Lambda, num)?;
        self.comps[p].l = Some(tl);
        Some(p)
    }

    fn unnamed_type(&mut self) -> P {
        if !self.check(b'U') || !self.check(b't') {
            return None;
        }
        let num = self.compact_number();
        if num < 0 {
            return None;
        }
        let ret = self.make_num(T::UnnamedType, num);
        if !self.add_sub(ret) {
            return None;
        }
        ret
    }

    fn clone_suffix(&mut self, encoding: P) -> P {
        let start = self.n;
        let at = |k: usize| self.s.get(k).copied().unwrap_or(0);
        let mut pend = start;
        let ident = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_';
        if at(pend) == b'.' && ident(at(pend + 1)) {
            pend += 2;
            while ident(at(pend)) {
                pend += 1;
            }
        }
        while at(pend) == b'.' && at(pend + 1).is_ascii_digit() {
            pend += 2;
            while at(pend).is_ascii_digit() {
                pend += 1;
            }
        }
        self.advance(pend - start);
        let text = self.s[start..pend].to_vec();
        let n = self.make_name(&text);
        self.make(T::Clone, encoding, n)
    }

    fn substitution(&mut self, prefix: bool) -> P {
        if !self.check(b'S') {
            return None;
        }
        let mut c = self.next_char();
        if c == b'_' || c.is_ascii_digit() || c.is_ascii_uppercase() {
            let mut id: u32 = 0;
            if c != b'_' {
                loop {
                    let new_id = if c.is_ascii_digit() {
                        id.wrapping_mul(36).wrapping_add(u32::from(c - b'0'))
                    } else if c.is_ascii_uppercase() {
                        id.wrapping_mul(36).wrapping_add(u32::from(c - b'A') + 10)
                    } else {
                        return None;
                    };
                    if new_id < id {
                        return None;
                    }
                    id = new_id;
                    c = self.next_char();
                    if c == b'_' {
                        break;
                    }
                }
                id = id.wrapping_add(1);
            }
            return self.subs.get(id as usize).copied();
        }
        let verbose = prefix && matches!(self.peek(), b'C' | b'D');
        let &(_, simple, full, last) = STANDARD_SUBS.iter().find(|e| e.0 == c)?;
        if !last.is_empty() {
            self.last_name = self.make_sub(last);
        }
        let mut dc = self.make_sub(if verbose { full } else { simple });
        if self.peek() == b'B' {
            dc = self.abi_tags(dc);
            if !self.add_sub(dc) {
                return None;
            }
        }
        dc
    }
}

/// A pending modifier while printing (libiberty's `d_print_mod`).
#[derive(Clone, Copy)]
struct Mod {
    m: usize,
    printed: bool,
    templates: Option<usize>,
    next: Option<usize>,
}

struct Printer<'c> {
    c: &'c [Comp],
    out: Vec<u8>,
    last: u8,
    /// Template list nodes: (template component, next).
    tpl: Vec<(usize, Option<usize>)>,
    templates: Option<usize>,
    mods: Vec<Mod>,
    modifiers: Option<usize>,
    fail: bool,
    recursion: usize,
    is_lambda_arg: i32,
    pack_index: i64,
    stack: Vec<usize>,
    printing: Vec<u8>,
    scopes: Vec<(usize, Option<usize>)>,
    num_saved_scopes: usize,
    next_copy_template: usize,
    num_copy_templates: usize,
    current_template: Option<usize>,
    steps: usize,
}

impl Printer<'_> {
    fn ch(&mut self, b: u8) {
        self.out.push(b);
        self.last = b;
    }
    fn st(&mut self, s: &str) {
        for &b in s.as_bytes() {
            self.ch(b);
        }
    }
    fn num(&mut self, n: i64) {
        self.st(&n.to_string());
    }
    fn t(&self, p: usize) -> T {
        self.c[p].t
    }
    fn l(&self, p: usize) -> Option<usize> {
        self.c[p].l
    }
    fn r(&self, p: usize) -> Option<usize> {
        self.c[p].r
    }
    fn op_code(&self, p: usize) -> &'static [u8; 2] {
        OPERATORS[self.c[p].n as usize].0
    }
    fn op_name(&self, p: usize) -> &'static str {
        OPERATORS[self.c[p].n as usize].1
    }

    fn count(&mut self, dc: Option<usize>, counting: &mut [u8], depth: usize) {
        let Some(dc) = dc else { return };
        if counting[dc] > 1 || depth > MAX_RECURSION_COUNT {
            return;
        }
        counting[dc] += 1;
        self.steps += 1;
        if self.steps > MAX_STEPS {
            self.fail = true;
            return;
        }
        use T::*;
        match self.t(dc) {
            Name | TemplateParam | FunctionParam | SubStd | Builtin | ExtendedBuiltin
            | Operator | Character | Number | UnnamedType => {}
            Ctor | Dtor | ExtendedOperator | Lambda | DefaultArg | GlobalConstructors
            | GlobalDestructors => self.count(self.l(dc), counting, depth),
            t => {
                if t == Template {
                    self.num_copy_templates += 1;
                }
                if matches!(t, Reference | RvalueReference)
                    && self.l(dc).is_some_and(|x| self.t(x) == TemplateParam)
                {
                    self.num_saved_scopes += 1;
                }
                if depth > RECURSION_LIMIT {
                    return;
                }
                self.count(self.l(dc), counting, depth + 1);
                self.count(self.r(dc), counting, depth + 1);
            }
        }
    }

    fn push_mod(&mut self, m: usize) -> usize {
        self.mods.push(Mod {
            m,
            printed: false,
            templates: self.templates,
            next: self.modifiers,
        });
        let i = self.mods.len() - 1;
        self.modifiers = Some(i);
        i
    }

    fn push_tpl(&mut self, decl: usize) {
        self.tpl.push((decl, self.templates));
        self.templates = Some(self.tpl.len() - 1);
    }

    fn index_arg(&self, args: Option<usize>, i: i64) -> Option<usize> {
        if i < 0 {
            return args;
        }
        let mut a = args;
        let mut i = i;
        while let Some(x) = a {
            if self.t(x) != T::TemplateArglist {
                return None;
            }
            if i <= 0 {
                break;
            }
            i -= 1;
            a = self.r(x);
        }
        if i != 0 {
            return None;
        }
        self.l(a?)
    }

    fn lookup_arg(&mut self, dc: usize) -> Option<usize> {
        let Some(t) = self.templates else {
            self.fail = true;
            return None;
        };
        let decl = self.tpl[t].0;
        self.index_arg(self.r(decl), self.c[dc].n)
    }

    fn find_pack(&mut self, dc: Option<usize>, depth: usize) -> Option<usize> {
        let dc = dc?;
        self.steps += 1;
        if self.steps > MAX_STEPS || depth > RECURSION_LIMIT * 4 {
            self.fail = true;
            return None;
        }
        use T::*;
        match self.t(dc) {
            // In a lambda's parameters a template parameter is `auto`, never a pack.
            TemplateParam if self.is_lambda_arg != 0 => None,
            TemplateParam => {
                let a = self.lookup_arg(dc)?;
                (self.t(a) == TemplateArglist).then_some(a)
            }
            PackExpansion | Lambda | Name | TaggedName | Operator | Builtin | ExtendedBuiltin
            | SubStd | Character | FunctionParam | UnnamedType | DefaultArg | Number => None,
            ExtendedOperator | Ctor | Dtor => self.find_pack(self.l(dc), depth + 1),
            _ => {
                if let Some(a) = self.find_pack(self.l(dc), depth + 1) {
                    return Some(a);
                }
                self.find_pack(self.r(dc), depth + 1)
            }
        }
    }

    fn pack_length(&self, dc: Option<usize>) -> i64 {
        let mut count = 0;
        let mut dc = dc;
        while let Some(x) = dc {
            if self.t(x) != T::TemplateArglist || self.l(x).is_none() {
                break;
            }
            count += 1;
            dc = self.r(x);
        }
        count
    }

    fn args_length(&mut self, dc: Option<usize>) -> i64 {
        let mut count = 0;
        let mut dc = dc;
        while let Some(x) = dc {
            if self.t(x) != T::TemplateArglist {
                break;
            }
            let Some(elt) = self.l(x) else { break };
            if self.t(elt) == T::PackExpansion {
                let a = self.find_pack(self.l(elt), 0);
                count += self.pack_length(a);
            } else {
                count += 1;
            }
            dc = self.r(x);
        }
        count
    }

    fn subexpr(&mut self, o: u8, dc: usize) {
        let simple = matches!(
            self.t(dc),
            T::Name | T::QualName | T::InitializerList | T::FunctionParam
        );
        if !simple {
            self.ch(b'(');
        }
        self.comp(o, Some(dc));
        if !simple {
            self.ch(b')');
        }
    }

    fn save_scope(&mut self, container: usize) {
        if self.scopes.len() >= self.num_saved_scopes {
            self.fail = true;
            return;
        }
        let mut src = self.templates;
        while let Some(s) = src {
            if self.next_copy_template >= self.num_copy_templates {
                self.fail = true;
                return;
            }
            self.next_copy_template += 1;
            src = self.tpl[s].1;
        }
        self.scopes.push((container, self.templates));
    }

    fn expr_op(&mut self, o: u8, dc: usize) {
        if self.t(dc) == T::Operator {
            let name = self.op_name(dc);
            self.st(name);
        } else {
            self.comp(o, Some(dc));
        }
    }

    fn maybe_fold(&mut self, o: u8, dc: usize) -> bool {
        let Some(op) = self.l(dc) else { return false };
        if self.t(op) != T::Operator {
            return false;
        }
        let fold = self.op_code(op);
        if fold[0] != b'f' {
            return false;
        }
        let Some(ops) = self.r(dc) else { return false };
        let operator = self.l(ops);
        let mut op1 = self.r(ops);
        let mut op2 = None;
        if let Some(x) = op1 {
            if self.t(x) == T::TrinaryArg2 {
                op2 = self.r(x);
                op1 = self.l(x);
            }
        }
        let (Some(operator), Some(op1)) = (operator, op1) else {
            self.fail = true;
            return true;
        };
        let save = self.pack_index;
        self.pack_index = -1;
        match fold[1] {
            b'l' => {
                self.st("(...");
                self.expr_op(o, operator);
                self.subexpr(o, op1);
                self.ch(b')');
            }
            b'r' => {
                self.ch(b'(');
                self.subexpr(o, op1);
                self.expr_op(o, operator);
                self.st("...)");
            }
            b'L' | b'R' => {
                self.ch(b'(');
                self.subexpr(o, op1);
                self.expr_op(o, operator);
                self.st("...");
                self.expr_op(o, operator);
                match op2 {
                    Some(op2) => self.subexpr(o, op2),
                    None => self.fail = true,
                }
                self.ch(b')');
            }
            _ => {}
        }
        self.pack_index = save;
        true
    }

    fn is_designated_init(&self, dc: usize) -> bool {
        if !matches!(self.t(dc), T::Binary | T::Trinary) {
            return false;
        }
        let Some(op) = self.l(dc) else { return false };
        if self.t(op) != T::Operator {
            return false;
        }
        let code = self.op_code(op);
        code[0] == b'd' && matches!(code[1], b'i' | b'x' | b'X')
    }

    fn maybe_designated_init(&mut self, o: u8, dc: usize) -> bool {
        if !self.is_designated_init(dc) {
            return false;
        }
        let code = self.op_code(self.l(dc).unwrap_or(0));
        let Some(operands) = self.r(dc) else {
            self.fail = true;
            return true;
        };
        let op1 = self.l(operands);
        let mut op2 = self.r(operands);
        if code[1] == b'i' {
            self.ch(b'.');
        } else {
            self.ch(b'[');
        }
        self.comp(o, op1);
        if code[1] == b'X' {
            self.st(" ... ");
            let Some(x) = op2 else {
                self.fail = true;
                return true;
            };
            self.comp(o, self.l(x));
            op2 = self.r(x);
        }
        if code[1] != b'i' {
            self.ch(b']');
        }
        let Some(op2) = op2 else {
            self.fail = true;
            return true;
        };
        if self.is_designated_init(op2) {
            self.comp(o, Some(op2));
        } else {
            self.ch(b'=');
            self.subexpr(o, op2);
        }
        true
    }

    fn comp(&mut self, o: u8, dc: Option<usize>) {
        let Some(d) = dc else {
            self.fail = true;
            return;
        };
        if self.printing[d] > 1 || self.recursion > MAX_RECURSION_COUNT {
            self.fail = true;
            return;
        }
        self.steps += 1;
        if self.steps > MAX_STEPS || self.out.len() > MAX_OUTPUT {
            self.fail = true;
            return;
        }
        self.printing[d] += 1;
        self.recursion += 1;
        self.stack.push(d);
        self.inner(o, d);
        self.stack.pop();
        self.printing[d] -= 1;
        self.recursion -= 1;
    }

    fn java_identifier(&mut self, name: &[u8]) {
        let end = name.len();
        let mut p = 0;
        while p < end {
            if end - p > 3 && name[p] == b'_' && name[p + 1] == b'_' && name[p + 2] == b'U' {
                let mut c: u64 = 0;
                let mut q = p + 3;
                while q < end {
                    let dig = match name[q] {
                        d @ b'0'..=b'9' => d - b'0',
                        d @ b'A'..=b'F' => d - b'A' + 10,
                        d @ b'a'..=b'f' => d - b'a' + 10,
                        _ => break,
                    };
                    c = c.wrapping_mul(16).wrapping_add(u64::from(dig));
                    q += 1;
                }
                if q < end && name[q] == b'_' && c < 256 {
                    self.ch(c as u8);
                    p = q + 1;
                    continue;
                }
            }
            self.ch(name[p]);
            p += 1;
        }
    }

    fn inner(&mut self, o: u8, dc: usize) {
        if self.fail {
            return;
        }
        use T::*;
        let mut dc = dc;
        let mut mod_inner: Option<usize> = None;
        let mut saved_templates: Option<Option<usize>> = None;
        match self.t(dc) {
            Name => {
                let s = &self.c[dc].s;
                if o & DMGL_JAVA == 0 {
                    for i in 0..s.len() {
                        let b = self.c[dc].s[i];
                        self.ch(b);
                    }
                } else {
                    let s = s.clone();
                    self.java_identifier(&s);
                }
            }
            TaggedName => {
                self.comp(o, self.l(dc));
                self.st("[abi:");
                self.comp(o, self.r(dc));
                self.ch(b']');
            }
            ModuleEntity => {
                self.comp(o, self.l(dc));
                self.ch(b'@');
                self.comp(o, self.r(dc));
            }
            ModuleName | ModulePartition => {
                if self.l(dc).is_some() {
                    self.comp(o, self.l(dc));
                }
                let c = if self.t(dc) == ModulePartition {
                    b':'
                } else if self.l(dc).is_some() {
                    b'.'
                } else {
                    0
                };
                if c != 0 {
                    self.ch(c);
                }
                self.comp(o, self.r(dc));
            }
            QualName | LocalName => {
                self.comp(o, self.l(dc));
                if o & DMGL_JAVA == 0 {
                    self.st("::");
                } else {
                    self.ch(b'.');
                }
                let mut local = self.r(dc);
                if let Some(x) = local {
                    if self.t(x) == DefaultArg {
                        self.st("{default arg#");
                        self.num(self.c[x].n + 1);
                        self.st("}::");
                        local = self.l(x);
                    }
                }
                self.comp(o, local);
            }
            TypedName => {
                let hold = self.modifiers;
                self.modifiers = None;
                let mut adpm: Vec<usize> = Vec::new();
                let mut typed = self.l(dc);
                while let Some(tn) = typed {
                    if adpm.len() >= 4 {
                        self.fail = true;
                        return;
                    }
                    adpm.push(self.push_mod(tn));
                    if !is_fnqual(self.t(tn)) {
                        break;
                    }
                    typed = self.l(tn);
                }
                let Some(mut tn) = typed else {
                    self.fail = true;
                    return;
                };
                if self.t(tn) == LocalName {
                    let mut x = self.r(tn);
                    if let Some(d) = x {
                        if self.t(d) == DefaultArg {
                            x = self.l(d);
                        }
                    }
                    while let Some(q) = x {
                        if !is_fnqual(self.t(q)) {
                            break;
                        }
                        if adpm.len() >= 4 {
                            self.fail = true;
                            return;
                        }
                        let prev = *adpm.last().unwrap_or(&0);
                        let mut copy = self.mods[prev];
                        copy.next = Some(prev);
                        self.mods.push(copy);
                        let k = self.mods.len() - 1;
                        self.modifiers = Some(k);
                        self.mods[prev].m = q;
                        self.mods[prev].printed = false;
                        self.mods[prev].templates = self.templates;
                        adpm.push(k);
                        x = self.l(q);
                    }
                    let Some(x) = x else {
                        self.fail = true;
                        return;
                    };
                    tn = x;
                }
                let hold_t = self.templates;
                if self.t(tn) == Template {
                    self.push_tpl(tn);
                }
                self.comp(o, self.r(dc));
                if self.t(tn) == Template {
                    self.templates = hold_t;
                }
                while let Some(i) = adpm.pop() {
                    if !self.mods[i].printed {
                        self.ch(b' ');
                        let m = self.mods[i].m;
                        self.print_mod(o, m);
                    }
                }
                self.modifiers = hold;
            }
            Template => {
                let hold_current = self.current_template;
                self.current_template = Some(dc);
                let hold_dpm = self.modifiers;
                self.modifiers = None;
                let dcl = self.l(dc);
                let jarray = o & DMGL_JAVA != 0
                    && dcl.is_some_and(|x| self.t(x) == Name && self.c[x].s == b"JArray");
                if jarray {
                    self.comp(o, self.r(dc));
                    self.st("[]");
                } else {
                    self.comp(o, dcl);
                    if self.last == b'<' {
                        self.ch(b' ');
                    }
                    self.ch(b'<');
                    self.comp(o, self.r(dc));
                    if self.last == b'>' {
                        self.ch(b' ');
                    }
                    self.ch(b'>');
                }
                self.modifiers = hold_dpm;
                self.current_template = hold_current;
            }
            TemplateParam => {
                if self.is_lambda_arg != 0 {
                    self.st("auto:");
                    self.num(self.c[dc].n + 1);
                } else {
                    let mut a = self.lookup_arg(dc);
                    if let Some(x) = a {
                        if self.t(x) == TemplateArglist {
                            a = self.index_arg(Some(x), self.pack_index);
                        }
                    }
                    let Some(a) = a else {
                        self.fail = true;
                        return;
                    };
                    let hold = self.templates;
                    self.templates = hold.and_then(|t| self.tpl[t].1);
                    self.comp(o, Some(a));
                    self.templates = hold;
                }
            }
            TparmObj => {
                self.st("template parameter object for ");
                self.comp(o, self.l(dc));
            }
            Ctor => self.comp(o, self.l(dc)),
            Dtor => {
                self.ch(b'~');
                self.comp(o, self.l(dc));
            }
            ModuleInit => {
                self.st("initializer for module ");
                self.comp(o, self.l(dc));
            }
            Vtable | Vtt | Typeinfo | TypeinfoName | TypeinfoFn | Thunk | VirtualThunk
            | CovariantThunk | JavaClass | Guard | TlsInit | TlsWrapper | HiddenAlias
            | TransactionClone | NonTransactionClone | JavaResource | GlobalConstructors
            | GlobalDestructors => {
                self.st(match self.t(dc) {
                    Vtable => "vtable for ",
                    Vtt => "VTT for ",
                    Typeinfo => "typeinfo for ",
                    TypeinfoName => "typeinfo name for ",
                    TypeinfoFn => "typeinfo fn for ",
                    Thunk => "non-virtual thunk to ",
                    VirtualThunk => "virtual thunk to ",
                    CovariantThunk => "covariant return thunk to ",
                    JavaClass => "java Class for ",
                    Guard => "guard variable for ",
                    TlsInit => "TLS init function for ",
                    TlsWrapper => "TLS wrapper function for ",
                    HiddenAlias => "hidden alias for ",
                    TransactionClone => "transaction clone for ",
                    NonTransactionClone => "non-transaction clone for ",
                    JavaResource => "java resource ",
                    GlobalConstructors => "global constructors keyed to ",
                    _ => "global destructors keyed to ",
                });
                self.comp(o, self.l(dc));
            }
            ConstructionVtable => {
                self.st("construction vtable for ");
                self.comp(o, self.l(dc));
                self.st("-in-");
                self.comp(o, self.r(dc));
            }
            Reftemp => {
                self.st("reference temporary #");
                self.comp(o, self.r(dc));
                self.st(" for ");
                self.comp(o, self.l(dc));
            }
            SubStd => {
                for i in 0..self.c[dc].s.len() {
                    let b = self.c[dc].s[i];
                    self.ch(b);
                }
            }
            Restrict | Volatile | Const => {
                let mut p = self.modifiers;
                while let Some(i) = p {
                    let m = self.mods[i];
                    if !m.printed {
                        let mt = self.t(m.m);
                        if !matches!(mt, Restrict | Volatile | Const) {
                            break;
                        }
                        if mt == self.t(dc) {
                            self.comp(o, self.l(dc));
                            return;
                        }
                    }
                    p = m.next;
                }
                self.modifier(o, dc, None, None);
            }
            Reference | RvalueReference => {
                let Some(mut sub) = self.l(dc) else {
                    self.fail = true;
                    return;
                };
                if self.is_lambda_arg == 0 && self.t(sub) == TemplateParam {
                    let scope = self.scopes.iter().find(|s| s.0 == sub).copied();
                    match scope {
                        None => {
                            self.save_scope(sub);
                            if self.fail {
                                return;
                            }
                        }
                        Some((_, scope_t)) => {
                            let me = self.stack.len() - 1;
                            let found = self
                                .stack
                                .iter()
                                .enumerate()
                                .any(|(k, &x)| x == sub || (x == dc && k != me));
                            if !found {
                                saved_templates = Some(self.templates);
                                self.templates = scope_t;
                            }
                        }
                    }
                    let mut a = self.lookup_arg(sub);
                    if let Some(x) = a {
                        if self.t(x) == TemplateArglist {
                            a = self.index_arg(Some(x), self.pack_index);
                        }
                    }
                    let Some(a) = a else {
                        if let Some(t) = saved_templates {
                            self.templates = t;
                        }
                        self.fail = true;
                        return;
                    };
                    sub = a;
                }
                if self.t(sub) == Reference || self.t(sub) == self.t(dc) {
                    dc = sub;
                } else if self.t(sub) == RvalueReference {
                    mod_inner = self.l(sub);
                }
                self.modifier(o, dc, mod_inner, saved_templates);
            }
            VendorTypeQual | Pointer | Complex | Imaginary => {
                self.modifier(o, dc, None, None);
            }
            t if is_fnqual(t) => self.modifier(o, dc, None, None),
            Builtin => {
                let b = BUILTINS[self.c[dc].n as usize];
                self.st(if o & DMGL_JAVA == 0 { b.0 } else { b.1 });
            }
            ExtendedBuiltin => {
                self.st("_Float");
                self.num(self.c[dc].n);
                if !self.c[dc].s.is_empty() {
                    self.ch(b'x');
                }
            }
            VendorType => self.comp(o, self.l(dc)),
            FunctionType => {
                let strip = o & !(DMGL_RET_POSTFIX | DMGL_RET_DROP);
                if o & DMGL_RET_POSTFIX != 0 {
                    let mods = self.modifiers;
                    self.function_type(strip, dc, mods);
                }
                if self.l(dc).is_some() && o & DMGL_RET_POSTFIX != 0 {
                    self.comp(strip, self.l(dc));
                } else if self.l(dc).is_some() && o & DMGL_RET_DROP == 0 {
                    let k = self.push_mod(dc);
                    self.comp(strip, self.l(dc));
                    self.modifiers = self.mods[k].next;
                    if self.mods[k].printed {
                        return;
                    }
                    if o & DMGL_RET_POSTFIX == 0 {
                        self.ch(b' ');
                    }
                }
                if o & DMGL_RET_POSTFIX == 0 {
                    let mods = self.modifiers;
                    self.function_type(strip, dc, mods);
                }
            }
            ArrayType => {
                let hold = self.modifiers;
                let mut adpm = vec![self.push_mod(dc)];
                let mut p = hold;
                while let Some(i) = p {
                    if !matches!(self.t(self.mods[i].m), Restrict | Volatile | Const) {
                        break;
                    }
                    if !self.mods[i].printed {
                        if adpm.len() >= 4 {
                            self.fail = true;
                            return;
                        }
                        let mut copy = self.mods[i];
                        copy.next = self.modifiers;
                        self.mods.push(copy);
                        let k = self.mods.len() - 1;
                        self.modifiers = Some(k);
                        self.mods[i].printed = true;
                        adpm.push(k);
                    }
                    p = self.mods[i].next;
                }
                self.comp(o, self.r(dc));
                self.modifiers = hold;
                if self.mods[adpm[0]].printed {
                    return;
                }
                while adpm.len() > 1 {
                    let k = adpm.pop().unwrap_or(0);
                    let m = self.mods[k].m;
                    self.print_mod(o, m);
                }
                let mods = self.modifiers;
                self.array_type(o, dc, mods);
            }
            PtrmemType | VectorType => {
                let k = self.push_mod(dc);
                self.comp(o, self.r(dc));
                if !self.mods[k].printed {
                    self.print_mod(o, dc);
                }
                self.modifiers = self.mods[k].next;
            }
            Arglist | TemplateArglist => {
                if self.l(dc).is_some() {
                    self.comp(o, self.l(dc));
                }
                if self.r(dc).is_some() {
                    self.st(", ");
                    let len = self.out.len();
                    self.comp(o, self.r(dc));
                    if self.out.len() == len {
                        self.out.truncate(len - 2);
                    }
                }
            }
            InitializerList => {
                if self.l(dc).is_some() {
                    self.comp(o, self.l(dc));
                }
                self.ch(b'{');
                self.comp(o, self.r(dc));
                self.ch(b'}');
            }
            Operator => {
                let name = self.op_name(dc);
                self.st("operator");
                if name.as_bytes()[0].is_ascii_lowercase() {
                    self.ch(b' ');
                }
                self.st(name.strip_suffix(' ').unwrap_or(name));
            }
            ExtendedOperator => {
                self.st("operator ");
                self.comp(o, self.l(dc));
            }
            Conversion => {
                self.st("operator ");
                self.conversion(o, dc);
            }
            Nullary => {
                let Some(op) = self.l(dc) else {
                    self.fail = true;
                    return;
                };
                self.expr_op(o, op);
            }
            Unary => self.unary(o, dc),
            Binary => self.binary(o, dc),
            BinaryArgs | TrinaryArg1 | TrinaryArg2 => self.fail = true,
            Trinary => self.trinary(o, dc),
            Literal | LiteralNeg => self.literal(o, dc),
            Number => self.num(self.c[dc].n),
            CompoundName => {
                self.comp(o, self.l(dc));
                self.comp(o, self.r(dc));
            }
            Character => self.ch(self.c[dc].n as u8),
            Decltype => {
                self.st("decltype (");
                self.comp(o, self.l(dc));
                self.ch(b')');
            }
            PackExpansion => {
                let a = self.find_pack(self.l(dc), 0);
                let Some(a) = a else {
                    let Some(x) = self.l(dc) else {
                        self.fail = true;
                        return;
                    };
                    self.subexpr(o, x);
                    self.st("...");
                    return;
                };
                let len = self.pack_length(Some(a));
                let pattern = self.l(dc);
                for i in 0..len {
                    self.pack_index = i;
                    self.comp(o, pattern);
                    if i < len - 1 {
                        self.st(", ");
                    }
                    if self.fail {
                        return;
                    }
                }
            }
            FunctionParam => {
                let num = self.c[dc].n;
                if num == 0 {
                    self.st("this");
                } else {
                    self.st("{parm#");
                    self.num(num);
                    self.ch(b'}');
                }
            }
            Lambda => {
                self.st("{lambda(");
                self.is_lambda_arg += 1;
                self.comp(o, self.l(dc));
                self.is_lambda_arg -= 1;
                self.st(")#");
                self.num(self.c[dc].n + 1);
                self.ch(b'}');
            }
            UnnamedType => {
                self.st("{unnamed type#");
                self.num(self.c[dc].n + 1);
                self.ch(b'}');
            }
            Clone => {
                self.comp(o, self.l(dc));
                self.st(" [clone ");
                self.comp(o, self.r(dc));
                self.ch(b']');
            }
            StructuredBinding => {
                self.ch(b'[');
                let mut x = Some(dc);
                while let Some(d) = x {
                    self.comp(o, self.l(d));
                    x = self.r(d);
                    if x.is_none() {
                        break;
                    }
                    self.st(", ");
                }
                self.ch(b']');
            }
            _ => self.fail = true,
        }
    }

    /// The common tail of the modifier cases: push `dc`, print what it modifies, print it.
    fn modifier(
        &mut self,
        o: u8,
        dc: usize,
        mod_inner: Option<usize>,
        saved_templates: Option<Option<usize>>,
    ) {
        let mark = self.mods.len();
        let k = self.push_mod(dc);
        let inner = mod_inner.or(self.l(dc));
        self.comp(o, inner);
        if !self.mods[k].printed {
            self.print_mod(o, dc);
        }
        self.modifiers = self.mods[k].next;
        self.mods.truncate(mark);
        if let Some(t) = saved_templates {
            self.templates = t;
        }
    }

    fn unary(&mut self, o: u8, dc: usize) {
        let (Some(op), Some(mut operand)) = (self.l(dc), self.r(dc)) else {
            self.fail = true;
            return;
        };
        let mut code: Option<&[u8; 2]> = None;
        if self.t(op) == T::Operator {
            let c = self.op_code(op);
            code = Some(c);
            if c == b"ad"
                && self.t(operand) == T::TypedName
                && self.l(operand).is_some_and(|x| self.t(x) == T::QualName)
                && self
                    .r(operand)
                    .is_some_and(|x| self.t(x) == T::FunctionType)
            {
                operand = self.l(operand).unwrap_or(operand);
            }
            if self.t(operand) == T::BinaryArgs {
                let Some(x) = self.l(operand) else {
                    self.fail = true;
                    return;
                };
                self.subexpr(o, x);
                self.expr_op(o, op);
                return;
            }
        }
        if code == Some(b"sZ") {
            let a = self.find_pack(Some(operand), 0);
            let len = self.pack_length(a);
            self.num(len);
            return;
        } else if code == Some(b"sP") {
            let len = self.args_length(Some(operand));
            self.num(len);
            return;
        }
        if self.t(op) != T::Cast {
            self.expr_op(o, op);
        } else {
            self.ch(b'(');
            self.comp(o, self.l(op));
            self.ch(b')');
        }
        if code == Some(b"gs") {
            self.comp(o, Some(operand));
        } else if code == Some(b"st") {
            self.ch(b'(');
            self.comp(o, Some(operand));
            self.ch(b')');
        } else {
            self.subexpr(o, operand);
        }
    }

    fn binary(&mut self, o: u8, dc: usize) {
        let (Some(op), Some(args)) = (self.l(dc), self.r(dc)) else {
            self.fail = true;
            return;
        };
        if self.t(args) != T::BinaryArgs {
            self.fail = true;
            return;
        }
        let is_op = self.t(op) == T::Operator;
        if is_op && matches!(self.op_code(op), [b's' | b'd' | b'c' | b'r', b'c']) {
            self.expr_op(o, op);
            self.ch(b'<');
            self.comp(o, self.l(args));
            self.st(">(");
            self.comp(o, self.r(args));
            self.ch(b')');
            return;
        }
        if self.maybe_fold(o, dc) || self.maybe_designated_init(o, dc) {
            return;
        }
        let code = if is_op { *self.op_code(op) } else { [0, 0] };
        let gt = is_op && self.op_name(op) == ">";
        if gt {
            self.ch(b'(');
        }
        let (Some(left), Some(right)) = (self.l(args), self.r(args)) else {
            self.fail = true;
            return;
        };
        if &code == b"cl" && self.t(left) == T::TypedName {
            if self.r(left).is_none_or(|x| self.t(x) != T::FunctionType) {
                self.fail = true;
            }
            let Some(f) = self.l(left) else {
                self.fail = true;
                return;
            };
            self.subexpr(o, f);
        } else {
            self.subexpr(o, left);
        }
        if &code == b"ix" {
            self.ch(b'[');
            self.comp(o, Some(right));
            self.ch(b']');
        } else {
            if &code != b"cl" {
                self.expr_op(o, op);
            }
            self.subexpr(o, right);
        }
        if gt {
            self.ch(b')');
        }
    }

    fn trinary(&mut self, o: u8, dc: usize) {
        let ok = self.r(dc).is_some_and(|a1| {
            self.t(a1) == T::TrinaryArg1
                && self.r(a1).is_some_and(|a2| self.t(a2) == T::TrinaryArg2)
        });
        if !ok {
            self.fail = true;
            return;
        }
        if self.maybe_fold(o, dc) || self.maybe_designated_init(o, dc) {
            return;
        }
        let Some(op) = self.l(dc) else {
            self.fail = true;
            return;
        };
        let a1 = self.r(dc).unwrap_or(0);
        let a2 = self.r(a1).unwrap_or(0);
        let (first, second, third) = (self.l(a1), self.l(a2), self.r(a2));
        if self.t(op) == T::Operator && self.op_code(op) == b"qu" {
            let (Some(f), Some(s), Some(t)) = (first, second, third) else {
                self.fail = true;
                return;
            };
            self.subexpr(o, f);
            self.expr_op(o, op);
            self.subexpr(o, s);
            self.st(" : ");
            self.subexpr(o, t);
        } else {
            self.st("new ");
            let Some(f) = first else {
                self.fail = true;
                return;
            };
            if self.l(f).is_some() {
                self.subexpr(o, f);
                self.ch(b' ');
            }
            self.comp(o, second);
            if let Some(t) = third {
                self.subexpr(o, t);
            }
        }
    }

    fn literal(&mut self, o: u8, dc: usize) {
        let (Some(ty), Some(val)) = (self.l(dc), self.r(dc)) else {
            self.fail = true;
            return;
        };
        let neg = self.t(dc) == T::LiteralNeg;
        let mut tp = Print::Default;
        if self.t(ty) == T::Builtin {
            tp = BUILTINS[self.c[ty].n as usize].2;
            match tp {
                Print::Int
                | Print::Unsigned
                | Print::Long
                | Print::UnsignedLong
                | Print::LongLong
                | Print::UnsignedLongLong
                    if self.t(val) == T::Name =>
                {
                    if neg {
                        self.ch(b'-');
                    }
                    self.comp(o, Some(val));
                    self.st(match tp {
                        Print::Unsigned => "u",
                        Print::Long => "l",
                        Print::UnsignedLong => "ul",
                        Print::LongLong => "ll",
                        Print::UnsignedLongLong => "ull",
                        _ => "",
                    });
                    return;
                }
                Print::Bool if self.t(val) == T::Name && self.c[val].s.len() == 1 && !neg => {
                    match self.c[val].s[0] {
                        b'0' => return self.st("false"),
                        b'1' => return self.st("true"),
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        self.ch(b'(');
        self.comp(o, Some(ty));
        self.ch(b')');
        if neg {
            self.ch(b'-');
        }
        if tp == Print::Float {
            self.ch(b'[');
        }
        self.comp(o, Some(val));
        if tp == Print::Float {
            self.ch(b']');
        }
    }

    fn mod_list(&mut self, o: u8, mods: Option<usize>, suffix: bool) {
        let mut mods = mods;
        while let Some(i) = mods {
            if self.fail {
                return;
            }
            let m = self.mods[i];
            if m.printed || (!suffix && is_fnqual(self.t(m.m))) {
                mods = m.next;
                continue;
            }
            self.mods[i].printed = true;
            let hold = self.templates;
            self.templates = m.templates;
            match self.t(m.m) {
                T::FunctionType => {
                    self.function_type(o, m.m, m.next);
                    self.templates = hold;
                    return;
                }
                T::ArrayType => {
                    self.array_type(o, m.m, m.next);
                    self.templates = hold;
                    return;
                }
                T::LocalName => {
                    let hold_mods = self.modifiers;
                    self.modifiers = None;
                    self.comp(o, self.l(m.m));
                    self.modifiers = hold_mods;
                    if o & DMGL_JAVA == 0 {
                        self.st("::");
                    } else {
                        self.ch(b'.');
                    }
                    let mut x = self.r(m.m);
                    if let Some(d) = x {
                        if self.t(d) == T::DefaultArg {
                            self.st("{default arg#");
                            self.num(self.c[d].n + 1);
                            self.st("}::");
                            x = self.l(d);
                        }
                    }
                    while let Some(q) = x {
                        if !is_fnqual(self.t(q)) {
                            break;
                        }
                        x = self.l(q);
                    }
                    self.comp(o, x);
                    self.templates = hold;
                    return;
                }
                _ => {}
            }
            self.print_mod(o, m.m);
            self.templates = hold;
            mods = m.next;
        }
    }

    fn print_mod(&mut self, o: u8, m: usize) {
        use T::*;
        match self.t(m) {
            Restrict | RestrictThis => self.st(" restrict"),
            Volatile | VolatileThis => self.st(" volatile"),
            Const | ConstThis => self.st(" const"),
            TransactionSafe => self.st(" transaction_safe"),
            Noexcept | ThrowSpec => {
                self.st(if self.t(m) == Noexcept {
                    " noexcept"
                } else {
                    " throw"
                });
                if self.r(m).is_some() {
                    self.ch(b'(');
                    self.comp(o, self.r(m));
                    self.ch(b')');
                }
            }
            VendorTypeQual => {
                self.ch(b' ');
                self.comp(o, self.r(m));
            }
            Pointer => {
                if o & DMGL_JAVA == 0 {
                    self.ch(b'*');
                }
            }
            ReferenceThis => self.st(" &"),
            Reference => self.ch(b'&'),
            RvalueReferenceThis => self.st(" &&"),
            RvalueReference => self.st("&&"),
            Complex => self.st(" _Complex"),
            Imaginary => self.st(" _Imaginary"),
            PtrmemType => {
                if self.last != b'(' {
                    self.ch(b' ');
                }
                self.comp(o, self.l(m));
                self.st("::*");
            }
            TypedName => self.comp(o, self.l(m)),
            VectorType => {
                self.st(" __vector(");
                self.comp(o, self.l(m));
                self.ch(b')');
            }
            _ => self.comp(o, Some(m)),
        }
    }

    fn function_type(&mut self, o: u8, dc: usize, mods: Option<usize>) {
        let mut need_paren = false;
        let mut need_space = false;
        let mut p = mods;
        while let Some(i) = p {
            let m = self.mods[i];
            if m.printed {
                break;
            }
            match self.t(m.m) {
                T::Pointer | T::Reference | T::RvalueReference => need_paren = true,
                T::Restrict
                | T::Volatile
                | T::Const
                | T::VendorTypeQual
                | T::Complex
                | T::Imaginary
                | T::PtrmemType => {
                    need_space = true;
                    need_paren = true;
                }
                _ => {}
            }
            if need_paren {
                break;
            }
            p = m.next;
        }
        if need_paren {
            if !need_space && self.last != b'(' && self.last != b'*' {
                need_space = true;
            }
            if need_space && self.last != b' ' {
                self.ch(b' ');
            }
            self.ch(b'(');
        }
        let hold = self.modifiers;
        self.modifiers = None;
        self.mod_list(o, mods, false);
        if need_paren {
            self.ch(b')');
        }
        self.ch(b'(');
        if self.r(dc).is_some() {
            self.comp(o, self.r(dc));
        }
        self.ch(b')');
        self.mod_list(o, mods, true);
        self.modifiers = hold;
    }

    fn array_type(&mut self, o: u8, dc: usize, mods: Option<usize>) {
        let mut need_space = true;
        if mods.is_some() {
            let mut need_paren = false;
            let mut p = mods;
            while let Some(i) = p {
                let m = self.mods[i];
                if !m.printed {
                    if self.t(m.m) == T::ArrayType {
                        need_space = false;
                    } else {
                        need_paren = true;
                        need_space = true;
                    }
                    break;
                }
                p = m.next;
            }
            if need_paren {
                self.st(" (");
            }
            self.mod_list(o, mods, false);
            if need_paren {
                self.ch(b')');
            }
        }
        if need_space {
            self.ch(b' ');
        }
        self.ch(b'[');
        if self.l(dc).is_some() {
            self.comp(o, self.l(dc));
        }
        self.ch(b']');
    }

    fn conversion(&mut self, o: u8, dc: usize) {
        let hold = self.templates;
        if let Some(ct) = self.current_template {
            self.push_tpl(ct);
        }
        let Some(left) = self.l(dc) else {
            self.fail = true;
            return;
        };
        if self.t(left) != T::Template {
            self.comp(o, Some(left));
            if self.current_template.is_some() {
                self.templates = hold;
            }
        } else {
            self.comp(o, self.l(left));
            if self.current_template.is_some() {
                self.templates = hold;
            }
            if self.last == b'<' {
                self.ch(b' ');
            }
            self.ch(b'<');
            self.comp(o, self.r(left));
            if self.last == b'>' {
                self.ch(b' ');
            }
            self.ch(b'>');
        }
    }
}

/// libiberty's `d_demangle` of `mangled` with the options `o`: `None` where it fails.
fn demangle(mangled: &[u8], o: u8) -> Option<String> {
    let len = mangled.len();
    // libiberty stops at a NUL; names here have none.
    let global = mangled.len() > 10
        && mangled.starts_with(b"_GLOBAL_")
        && matches!(mangled[8], b'.' | b'_' | b'$')
        && matches!(mangled[9], b'D' | b'I')
        && mangled[10] == b'_';
    if !mangled.starts_with(b"_Z") && !global {
        return None;
    }
    if 2 * len > RECURSION_LIMIT {
        return None;
    }
    let mut state = 1;
    loop {
        match parse(mangled, o, global, state) {
            Err(Some(-1)) => state = 0,
            Err(_) => return None,
            Ok(p) => return print(p, o),
        }
    }
}

/// The parse of [`demangle`]: `Err` with the `sr` state when it fails.
fn parse(mangled: &[u8], o: u8, global: bool, state: i8) -> Result<(Vec<Comp>, usize), Option<i8>> {
    let len = mangled.len();
    let mut p = Parser {
        s: mangled,
        n: 0,
        comps: Vec::new(),
        num_comps: 2 * len,
        subs: Vec::new(),
        num_subs: len,
        last_name: None,
        is_expression: false,
        is_conversion: false,
        recursion_level: 0,
        java: o & DMGL_JAVA != 0,
        unresolved_name_state: state,
    };
    let dc = if global {
        let t = if mangled[9] == b'I' {
            T::GlobalConstructors
        } else {
            T::GlobalDestructors
        };
        p.advance(11);
        let inner = if p.peek() == b'_' && p.peek_next() == b'Z' {
            p.advance(2);
            p.encoding(false)
        } else {
            let rest = mangled[11..].to_vec();
            p.make_name(&rest)
        };
        let dc = p.make(t, inner, None);
        p.n = len;
        dc
    } else {
        p.mangled_name(true)
    };
    match dc {
        Some(dc) if p.peek() == 0 => Ok((p.comps, dc)),
        _ => Err(Some(p.unresolved_name_state)),
    }
}

/// The printing of [`demangle`].
fn print((comps, dc): (Vec<Comp>, usize), o: u8) -> Option<String> {
    let mut pr = Printer {
        c: &comps,
        out: Vec::new(),
        last: 0,
        tpl: Vec::new(),
        templates: None,
        mods: Vec::new(),
        modifiers: None,
        fail: false,
        recursion: 0,
        is_lambda_arg: 0,
        pack_index: 0,
        stack: Vec::new(),
        printing: vec![0; comps.len()],
        scopes: Vec::new(),
        num_saved_scopes: 0,
        next_copy_template: 0,
        num_copy_templates: 0,
        current_template: None,
        steps: 0,
    };
    let mut counting = vec![0u8; comps.len()];
    pr.count(Some(dc), &mut counting, 0);
    pr.num_copy_templates *= pr.num_saved_scopes;
    pr.steps = 0;
    if pr.fail {
        return None;
    }
    pr.comp(o, Some(dc));
    if pr.fail {
        return None;
    }
    // The caller reads a C string: it ends at a NUL (`__U0_` in a Java identifier).
    if let Some(z) = pr.out.iter().position(|&b| b == 0) {
        pr.out.truncate(z);
    }
    Some(String::from_utf8_lossy(&pr.out).into_owned())
}

/// Names longer than this are demangled on a thread with a large stack (the parser and
/// printer recurse about once per byte of the name, up to 1024 bytes: a debug build's frames
/// take some 3.5 KiB a byte, a release build's under 0.5 KiB, so under 512 KiB for the
/// longest name, well within a thread's 2 MiB).
const SMALL_STACK_NAME: usize = if cfg!(debug_assertions) { 192 } else { 1024 };

/// A name to demangle on [`worker`]'s thread, and where its result goes.
type Job = (Vec<u8>, u8, std::sync::mpsc::Sender<Option<String>>);

/// The thread (started on first use, 64 MiB of stack) that demangles long names, one at a
/// time, for every caller.
fn worker() -> Option<&'static std::sync::mpsc::Sender<Job>> {
    static WORKER: std::sync::OnceLock<Option<std::sync::mpsc::Sender<Job>>> =
        std::sync::OnceLock::new();
    WORKER
        .get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("demangle".into())
                .stack_size(64 << 20)
                .spawn(move || {
                    for (name, o, reply) in rx {
                        let _ = reply.send(demangle(&name, o));
                    }
                })
                .ok()?;
            Some(tx)
        })
        .as_ref()
}

fn run(sym: &str, o: u8) -> Option<String> {
    if sym.len() <= SMALL_STACK_NAME {
        return demangle(sym.as_bytes(), o);
    }
    // A name libiberty rejects for its length needs no stack.
    if 2 * sym.len() > RECURSION_LIMIT {
        return None;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    worker()?.send((sym.as_bytes().to_vec(), o, tx)).ok()?;
    rx.recv().ok()?
}

/// `java_demangle_v3(sym)`: `None` where libiberty fails (gprof prints the name raw).
pub fn java_demangle(sym: &str) -> Option<String> {
    run(sym, DMGL_JAVA | DMGL_RET_POSTFIX)
}

/// `cplus_demangle_v3(sym, DMGL_PARAMS)`, the same code printing C++ (for the tests).
#[cfg(test)]
fn cxx(sym: &str) -> Option<String> {
    run(sym, 0)
}

#[cfg(test)]
mod tests {
    use super::{cxx, java_demangle};

    #[test]
    fn java_renderings() {
        let j = |s: &str| java_demangle(s);
        assert_eq!(j("_ZN2ns3Box3getEi").as_deref(), Some("ns.Box.get(int)"));
        assert_eq!(
            j("_ZNK2ns3Box3getEi").as_deref(),
            Some("ns.Box.get(int) const")
        );
        assert_eq!(j("_Z5plainib").as_deref(), Some("plain(int, boolean)"));
        assert_eq!(
            j("_ZN2ns5twiceIlEET_S1_").as_deref(),
            Some("ns.twice<long>(long)long")
        );
        assert_eq!(j("_ZN2ns3BoxC2El").as_deref(), Some("ns.Box.Box(long)"));
        assert_eq!(
            j("_ZNSaIiEC2Ev").as_deref(),
            Some("std::allocator<int>.allocator()")
        );
        assert_eq!(j("_Z1fPKc").as_deref(), Some("f(byte const)"));
        assert_eq!(j("_Z1fPFivE").as_deref(), Some("f(int ()())"));
        assert_eq!(j("_Z1fM1AFivE").as_deref(), Some("f(int (A::*)())"));
        assert_eq!(
            j("_ZNSt8functionIFviEEC1Ev").as_deref(),
            Some("std.function<void (int)>.function()")
        );
        assert_eq!(j("_ZN1BCI11AEi").as_deref(), Some("B.A(int)"));
        assert_eq!(j("_ZTV1A").as_deref(), Some("vtable for A"));
        assert_eq!(
            j("_Z3fooILi2EEvRAplT_Li1E_i").as_deref(),
            Some("foo<2>(int (&) [(2)+(1)])void")
        );
        assert_eq!(j("_ZDC1a1bE").as_deref(), Some("[a, b]"));
        assert_eq!(j("_ZW3foo1fv").as_deref(), Some("f@foo()"));
        assert_eq!(j("_Z1fDF16_").as_deref(), Some("f(_Float16)"));
        assert_eq!(j("_Z1fIiEvT_Q1xv"), None);
        assert_eq!(
            j("_GLOBAL__I__Z1fv").as_deref(),
            Some("global constructors keyed to f()")
        );
        assert_eq!(j("_Z7foo__U41_v").as_deref(), Some("foo__U4(_, void)"));
        assert_eq!(j("_Z9foo__U41_v").as_deref(), Some("fooA()"));
    }

    /// What binutils 2.40's demangler does beyond the 2021 one (found comparing with
    /// `c++filt -s java` 2.40): `sr <prefix> E <name>` first, the older `sr <type> <name>` when
    /// the name fails that way; any other letter starts a type's name (`L`, an operator's
    /// code); clone suffixes with digits; a module's name is no type; a generic lambda's
    /// `auto...` is never a pack.
    #[test]
    fn binutils_2_40_grammar() {
        let j = |s: &str| java_demangle(s);
        assert_eq!(
            j("_ZN4llvm10checkedAddIiEENSt9enable_ifIXsr3std9is_signedIT_EE5valueENS_8OptionalIS2_EEE4typeES2_S2_")
                .as_deref(),
            Some("llvm.checkedAdd<int>(int, int)std.enable_if<std.is_signed<int>.value, llvm.Optional<int> >.type")
        );
        assert_eq!(j("_ZTVL4llvm").as_deref(), Some("vtable for llvm"));
        assert_eq!(
            j("_Z4gen_split").as_deref(),
            Some("gen_(short, operator+, int, unsigned short)")
        );
        assert_eq!(
            j("_Z3fooi._omp_cpy8n.6").as_deref(),
            Some("foo(int) [clone ._omp_cpy8n.6]")
        );
        assert_eq!(j("_ZNW3mod1A1fES_"), None);
        assert_eq!(
            j("_ZN1BW3mod1A1fES0_1C").as_deref(),
            Some("B.A@mod.f(C@mod)")
        );
        assert_eq!(
            j("_ZN1AUlDpT_E_clIJiEEEDaS1_").as_deref(),
            Some("A.{lambda((auto:1)...)#1}.operator()<int>(int)auto")
        );
        assert_eq!(
            j("_ZcvT_IIStUlvE_StUlStcvDpT_E_EE").as_deref(),
            Some("operator std.{lambda()#1}<std.{lambda()#1}, std.{lambda(std.operator (auto:1)...)#1}>")
        );
    }

    #[test]
    fn cplusplus_renderings() {
        assert_eq!(cxx("_Z1fPFivE").as_deref(), Some("f(int (*)())"));
        assert_eq!(
            cxx("_ZN2ns5twiceIlEET_S1_").as_deref(),
            Some("long ns::twice<long>(long)")
        );
    }

    /// Garbage, truncated names and deep nesting: no panic, no overflow, and libiberty's
    /// limits (a name over 1024 bytes fails).
    #[test]
    fn hostile_names() {
        let good = "_ZN9__gnu_cxx13new_allocatorISt4pairIKiSt6vectorIdSaIdEEEE8allocateEmPKv";
        for end in 0..=good.len() {
            let _ = java_demangle(&good[..end]);
        }
        for junk in [
            "_Z",
            "_ZN",
            "_ZNE",
            "_ZS_",
            "_ZT_",
            "_ZL",
            "_Z1",
            "_Z999999999999a",
            "_ZIiE",
            "_Z1fIT_EvT_",
            "_ZZ",
            "_ZZZZZZ",
            "_ZSt",
            "_ZDp",
            "_ZUl",
            "_Z1fU",
            "_ZGR",
            "_ZTh",
            "_GLOBAL__I_",
            "_GLOBAL__D__Z",
            "_Z1fL",
            "_Z1fX",
            "_Z1fILZ",
            "_Z1f.",
        ] {
            let _ = java_demangle(junk);
        }
        // Nesting: 500 pointers is demangled (the name is under 1024 bytes), 600 is not.
        let deep = format!("_Z1f{}i", "P".repeat(500));
        assert_eq!(java_demangle(&deep).as_deref(), Some("f(int)"));
        let deeper = format!("_Z1f{}i", "P".repeat(1100));
        assert_eq!(java_demangle(&deeper), None);
        let fns = format!("_Z1f{}i{}", "PF".repeat(300), "vE".repeat(300));
        let _ = java_demangle(&fns);
        let templates = format!("_Z1f{}i{}", "1AI".repeat(200), "E".repeat(200));
        let _ = java_demangle(&templates);
        // Substitutions doubling the text at each level.
        let mut doubling = String::from("_Z1fI1AIiE");
        for k in 0..60 {
            doubling += &format!("1BIS{}_S{}_E", k, k);
        }
        doubling += "EvT_";
        let _ = java_demangle(&doubling);
        // Every byte value after a valid prefix.
        for b in 1u8..=255 {
            let mut s = String::from("_ZN1A");
            s.push(char::from(b));
            let _ = java_demangle(&s);
        }
    }
}
