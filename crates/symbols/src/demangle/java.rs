//! libiberty's `java_demangle_v3` for the C++ names of `-pg` programs: the Itanium demangler
//! printing Java (`DMGL_JAVA | DMGL_PARAMS | DMGL_RET_POSTFIX`).
//!
//! The name is parsed here into a small tree (the common part of the grammar: nested, local
//! and template names, constructors, destructors, operators, lambdas, `std` abbreviations,
//! builtin, qualified, pointer and reference types with reference collapsing, substitutions,
//! template parameters, argument packs and their expansions, literals, scoped-name and
//! template-parameter expressions, function types, clone suffixes; not pointers to functions,
//! other expressions, inheriting constructors, vendor types) and printed
//! twice: the C++ way, which must equal libiberty's own output for the name (else the name is
//! not reproduced), and the Java way, from the same tree:
//!
//! * names are joined with `.` (but the `std::` abbreviations keep their literal text, such as
//!   `std::allocator`);
//! * builtin types take their Java names (`bool` is `boolean`, `char` is `byte`, `wchar_t` is
//!   `char`, `long long` is `long`, `unsigned int` is `unsigned`);
//! * pointers print no `*`;
//! * a function's return type (templates) follows its parameters and qualifiers, with no
//!   space (`as<long>() constlong`);
//! * `JArray<T>` prints as `T[]`.

/// A node of the demangled tree.
#[derive(Debug, Clone)]
enum Node {
    /// A source name or an abbreviation's literal text.
    Name(String),
    /// `left::right`.
    Qual(Box<Node>, Box<Node>),
    /// `name<args>`.
    Template(Box<Node>, Vec<Node>),
    /// A constructor or destructor: its class's last name.
    Structor { dtor: bool, name: String },
    /// `operator…`.
    Operator(&'static str),
    /// A builtin type (its mangled letter).
    Builtin(u8),
    /// A type with a modifier: `*`, `&`, `&&`, ` const`, ` volatile`, ` restrict`.
    Modified(Box<Node>, Modifier),
    /// A function type (`int (int)`, printed so in Java too).
    FnType(Box<Node>, Vec<Node>),
    /// A lambda's closure type: its parameters and number (`{lambda(int)#1}`).
    Lambda(Vec<Node>, usize),
    /// A template argument pack (`J…E`): its arguments, printed in line.
    Pack(Vec<Node>),
    /// A pack expansion (`Dp`): the pattern, to be expanded over the pack it holds.
    Expansion(Box<Node>),
    /// A literal template argument (`L type value E`).
    Literal {
        ty: Box<Node>,
        negative: bool,
        value: String,
    },
    /// A function: name, return type, parameters, the method's qualifiers.
    Function {
        name: Box<Node>,
        ret: Option<Box<Node>>,
        params: Vec<Node>,
        quals: Vec<Modifier>,
        clones: Vec<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Modifier {
    Pointer,
    Ref,
    RvalueRef,
    Const,
    Volatile,
    Restrict,
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
    subs: Vec<Node>,
    /// The template arguments `T_` refers to (the last ones of the function's name).
    template_args: Vec<Node>,
    /// The last source name seen (a constructor's or destructor's name).
    last_name: String,
}

const OPERATORS: &[(&str, &str)] = &[
    ("nw", "new"),
    ("na", "new[]"),
    ("dl", "delete"),
    ("da", "delete[]"),
    ("ps", "+"),
    ("ng", "-"),
    ("ad", "&"),
    ("de", "*"),
    ("co", "~"),
    ("pl", "+"),
    ("mi", "-"),
    ("ml", "*"),
    ("dv", "/"),
    ("rm", "%"),
    ("an", "&"),
    ("or", "|"),
    ("eo", "^"),
    ("aS", "="),
    ("pL", "+="),
    ("mI", "-="),
    ("mL", "*="),
    ("dV", "/="),
    ("rM", "%="),
    ("aN", "&="),
    ("oR", "|="),
    ("eO", "^="),
    ("ls", "<<"),
    ("rs", ">>"),
    ("lS", "<<="),
    ("rS", ">>="),
    ("eq", "=="),
    ("ne", "!="),
    ("lt", "<"),
    ("gt", ">"),
    ("le", "<="),
    ("ge", ">="),
    ("ss", "<=>"),
    ("nt", "!"),
    ("aa", "&&"),
    ("oo", "||"),
    ("pp", "++"),
    ("mm", "--"),
    ("cm", ","),
    ("pm", "->*"),
    ("pt", "->"),
    ("cl", "()"),
    ("ix", "[]"),
];

impl Parser<'_> {
    fn peek(&self) -> u8 {
        self.s.get(self.at).copied().unwrap_or(0)
    }

    fn peek_at(&self, k: usize) -> u8 {
        self.s.get(self.at + k).copied().unwrap_or(0)
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == c {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn number(&mut self) -> Option<usize> {
        let start = self.at;
        while self.peek().is_ascii_digit() {
            self.at += 1;
        }
        std::str::from_utf8(&self.s[start..self.at])
            .ok()?
            .parse()
            .ok()
    }

    fn source_name(&mut self) -> Option<Node> {
        let n = self.number()?;
        if n == 0 || self.at + n > self.s.len() {
            return None;
        }
        let name = std::str::from_utf8(&self.s[self.at..self.at + n]).ok()?;
        // libiberty prints `(anonymous namespace)` for these; not reproduced.
        if name.starts_with("_GLOBAL_") {
            return None;
        }
        self.at += n;
        self.last_name = name.to_string();
        Some(Node::Name(name.to_string()))
    }

    /// `S_`, `S<seq-id>_` or a `std` abbreviation (`prefix`: before a constructor or
    /// destructor, where libiberty spells the abbreviations out).
    fn substitution(&mut self, prefix: bool) -> Option<Node> {
        if !self.eat(b'S') {
            return None;
        }
        let c = self.peek();
        if c == b'_' || c.is_ascii_digit() || c.is_ascii_uppercase() {
            let mut id = 0usize;
            if c != b'_' {
                while self.peek() != b'_' {
                    let d = self.peek();
                    let v = match d {
                        b'0'..=b'9' => d - b'0',
                        b'A'..=b'Z' => d - b'A' + 10,
                        _ => return None,
                    };
                    id = id.checked_mul(36)?.checked_add(usize::from(v))?;
                    self.at += 1;
                }
                id += 1;
            }
            self.at += 1;
            let node = self.subs.get(id)?.clone();
            if let Some(n) = last_source_name(&node) {
                self.last_name = n;
            }
            return Some(node);
        }
        self.at += 1;
        let verbose = prefix && matches!(self.peek(), b'C' | b'D');
        let (simple, full, last) = match c {
            b'a' => ("std::allocator", "std::allocator", "allocator"),
            b'b' => ("std::basic_string", "std::basic_string", "basic_string"),
            b's' => (
                "std::string",
                "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
                "basic_string",
            ),
            b'i' => (
                "std::istream",
                "std::basic_istream<char, std::char_traits<char> >",
                "basic_istream",
            ),
            b'o' => (
                "std::ostream",
                "std::basic_ostream<char, std::char_traits<char> >",
                "basic_ostream",
            ),
            b'd' => (
                "std::iostream",
                "std::basic_iostream<char, std::char_traits<char> >",
                "basic_iostream",
            ),
            _ => return None,
        };
        self.last_name = last.to_string();
        Some(Node::Name(if verbose { full } else { simple }.to_string()))
    }

    fn unqualified(&mut self) -> Option<Node> {
        let c = self.peek();
        if c.is_ascii_digit() {
            self.source_name()
        } else if c == b'C' || c == b'D' {
            let kind = self.peek_at(1);
            let ok = if c == b'C' {
                matches!(kind, b'1'..=b'3')
            } else {
                matches!(kind, b'0'..=b'2')
            };
            if !ok {
                return None;
            }
            self.at += 2;
            Some(Node::Structor {
                dtor: c == b'D',
                name: self.last_name.clone(),
            })
        } else if c == b'U' && self.peek_at(1) == b'l' {
            self.at += 2;
            let mut params = Vec::new();
            while !self.eat(b'E') {
                let t = self.typ()?;
                push_expanded(&mut params, t)?;
            }
            if params.len() == 1 && matches!(params[0], Node::Builtin(b'v')) {
                params.clear();
            }
            let n = if self.eat(b'_') {
                1
            } else {
                let n = self.number()?;
                if !self.eat(b'_') {
                    return None;
                }
                n + 2
            };
            Some(Node::Lambda(params, n))
        } else if c.is_ascii_lowercase() {
            let code = [c, self.peek_at(1)];
            let &(_, op) = OPERATORS.iter().find(|(k, _)| k.as_bytes() == code)?;
            self.at += 2;
            Some(Node::Operator(op))
        } else {
            None
        }
    }

    fn template_args(&mut self) -> Option<Vec<Node>> {
        if !self.eat(b'I') {
            return None;
        }
        // Arguments do not change the name a later constructor takes.
        let hold = self.last_name.clone();
        let mut args = Vec::new();
        while !self.eat(b'E') {
            let arg = self.template_arg()?;
            push_expanded(&mut args, arg)?;
        }
        self.last_name = hold;
        Some(args)
    }

    fn template_arg(&mut self) -> Option<Node> {
        match self.peek() {
            b'L' => {
                self.at += 1;
                if self.peek() == b'_' {
                    return None;
                }
                let ty = self.typ()?;
                let negative = self.eat(b'n');
                let start = self.at;
                while !matches!(self.peek(), b'E' | 0) {
                    self.at += 1;
                }
                let value = std::str::from_utf8(&self.s[start..self.at])
                    .ok()?
                    .to_string();
                if !self.eat(b'E') || value.is_empty() {
                    return None;
                }
                Some(Node::Literal {
                    ty: Box::new(ty),
                    negative,
                    value,
                })
            }
            b'J' => {
                self.at += 1;
                let mut items = Vec::new();
                while !self.eat(b'E') {
                    let arg = self.template_arg()?;
                    push_expanded(&mut items, arg)?;
                }
                Some(Node::Pack(items))
            }
            // Of the expressions, a scoped name (`X sr TYPE NAME E`, `T::value`) and a
            // template parameter.
            b'X' if self.peek_at(1) == b's' && self.peek_at(2) == b'r' => {
                self.at += 3;
                let ty = self.typ()?;
                let name = self.unqualified()?;
                let mut n = Node::Qual(Box::new(ty), Box::new(name));
                if self.peek() == b'I' {
                    n = Node::Template(Box::new(n), self.template_args()?);
                }
                self.eat(b'E').then_some(n)
            }
            // A template parameter as an expression (`X T_ E`).
            b'X' if self.peek_at(1) == b'T' => {
                self.at += 1;
                let n = self.template_param()?;
                self.eat(b'E').then_some(n)
            }
            b'X' | 0 => None,
            _ => self.typ(),
        }
    }

    /// A name; `Ok` also says whether it ends in template arguments and what `N…E`
    /// qualifies the method with.
    fn name(&mut self) -> Option<(Node, bool, Vec<Modifier>)> {
        match self.peek() {
            b'N' => {
                self.at += 1;
                let mut quals = Vec::new();
                loop {
                    match self.peek() {
                        b'r' => quals.push(Modifier::Restrict),
                        b'V' => quals.push(Modifier::Volatile),
                        b'K' => quals.push(Modifier::Const),
                        _ => break,
                    }
                    self.at += 1;
                }
                if matches!(self.peek(), b'R' | b'O') {
                    return None;
                }
                // libiberty prints them restrict, volatile, const.
                quals.reverse();
                let mut cur: Option<Node> = None;
                let mut is_template = false;
                loop {
                    let c = self.peek();
                    if c == b'E' {
                        self.at += 1;
                        break;
                    }
                    let next = if c == b'S' && self.peek_at(1) == b't' && cur.is_none() {
                        self.at += 2;
                        Node::Name("std".into())
                    } else if c == b'S' && cur.is_none() {
                        let n = self.substitution(true)?;
                        cur = Some(n);
                        is_template = false;
                        continue;
                    } else if c == b'T' && cur.is_none() {
                        let n = self.template_param()?;
                        if self.peek() != b'E' {
                            self.subs.push(n.clone());
                        }
                        cur = Some(n);
                        continue;
                    } else if c == b'I' {
                        let base = cur.take()?;
                        let args = self.template_args()?;
                        let t = Node::Template(Box::new(base), args);
                        is_template = true;
                        if self.peek() != b'E' {
                            self.subs.push(t.clone());
                        }
                        cur = Some(t);
                        continue;
                    } else {
                        self.unqualified()?
                    };
                    is_template = false;
                    let std = matches!(&next, Node::Name(n) if n == "std") && cur.is_none();
                    cur = Some(match cur.take() {
                        None => next,
                        Some(left) => Node::Qual(Box::new(left), Box::new(next)),
                    });
                    if !std && self.peek() != b'E' {
                        self.subs.push(cur.clone()?);
                    }
                }
                Some((cur?, is_template, quals))
            }
            b'Z' => {
                // A local name: the function (printed without its return type), then the
                // entity's name; a discriminator is not printed.
                self.at += 1;
                let function = self.encoding(false)?;
                if !self.eat(b'E') || self.peek() == b's' {
                    return None;
                }
                let (entity, is_template, quals) = self.name()?;
                if self.eat(b'_') {
                    if self.eat(b'_') {
                        self.number()?;
                        if !self.eat(b'_') {
                            return None;
                        }
                    } else if self.peek().is_ascii_digit() {
                        self.at += 1;
                    } else {
                        return None;
                    }
                }
                Some((
                    Node::Qual(Box::new(function), Box::new(entity)),
                    is_template,
                    quals,
                ))
            }
            b'S' if self.peek_at(1) == b't' => {
                self.at += 2;
                let n = self.unqualified()?;
                let q = Node::Qual(Box::new(Node::Name("std".into())), Box::new(n));
                self.unscoped_template(q)
            }
            b'S' => {
                let n = self.substitution(false)?;
                if self.peek() == b'I' {
                    let args = self.template_args()?;
                    return Some((Node::Template(Box::new(n), args), true, Vec::new()));
                }
                None
            }
            _ => {
                let n = self.unqualified()?;
                self.unscoped_template(n)
            }
        }
    }

    fn unscoped_template(&mut self, n: Node) -> Option<(Node, bool, Vec<Modifier>)> {
        if self.peek() == b'I' {
            self.subs.push(n.clone());
            let args = self.template_args()?;
            return Some((Node::Template(Box::new(n), args), true, Vec::new()));
        }
        Some((n, false, Vec::new()))
    }

    fn template_param(&mut self) -> Option<Node> {
        if !self.eat(b'T') {
            return None;
        }
        let k = if self.eat(b'_') {
            0
        } else {
            let n = self.number()?;
            if !self.eat(b'_') {
                return None;
            }
            n + 1
        };
        self.template_args.get(k).cloned()
    }

    fn typ(&mut self) -> Option<Node> {
        let c = self.peek();
        let modifier = match c {
            b'P' => Some(Modifier::Pointer),
            b'R' => Some(Modifier::Ref),
            b'O' => Some(Modifier::RvalueRef),
            b'K' => Some(Modifier::Const),
            b'V' => Some(Modifier::Volatile),
            b'r' => Some(Modifier::Restrict),
            _ => None,
        };
        if let Some(m) = modifier {
            self.at += 1;
            if matches!(m, Modifier::Const | Modifier::Volatile | Modifier::Restrict)
                && matches!(self.peek(), b'K' | b'V' | b'r' | b'F')
            {
                return None;
            }
            let inner = self.typ()?;
            if matches!(inner, Node::FnType(..)) {
                // Pointers and references to functions print around the parameters.
                return None;
            }
            let t = match (&inner, m) {
                // Reference collapsing: `&` wins.
                (
                    Node::Modified(base, inner_m @ (Modifier::Ref | Modifier::RvalueRef)),
                    Modifier::Ref | Modifier::RvalueRef,
                ) => {
                    let m = if *inner_m == Modifier::RvalueRef && m == Modifier::RvalueRef {
                        Modifier::RvalueRef
                    } else {
                        Modifier::Ref
                    };
                    Node::Modified(base.clone(), m)
                }
                _ => Node::Modified(Box::new(inner), m),
            };
            self.subs.push(t.clone());
            return Some(t);
        }
        if b"abcdefghijlmnostvwxyz".contains(&c) {
            self.at += 1;
            return Some(Node::Builtin(c));
        }
        let t = match c {
            b'S' => {
                let n1 = self.peek_at(1);
                if n1.is_ascii_digit() || n1 == b'_' || n1.is_ascii_uppercase() {
                    let n = self.substitution(false)?;
                    if self.peek() == b'I' {
                        let args = self.template_args()?;
                        Node::Template(Box::new(n), args)
                    } else {
                        return Some(n);
                    }
                } else if n1 == b't' {
                    self.name()?.0
                } else {
                    let n = self.substitution(false)?;
                    if self.peek() == b'I' {
                        let args = self.template_args()?;
                        Node::Template(Box::new(n), args)
                    } else {
                        return Some(n);
                    }
                }
            }
            b'T' => {
                let n = self.template_param()?;
                if self.peek() == b'I' {
                    return None;
                }
                n
            }
            b'N' | b'Z' | b'1'..=b'9' => self.name()?.0,
            b'F' => {
                self.at += 1;
                self.eat(b'Y');
                let ret = self.typ()?;
                let mut params = Vec::new();
                while !self.eat(b'E') {
                    if matches!(self.peek(), b'R' | b'O' | 0) && self.peek_at(1) == b'E' {
                        return None;
                    }
                    let t = self.typ()?;
                    push_expanded(&mut params, t)?;
                }
                if params.len() == 1 && matches!(params[0], Node::Builtin(b'v')) {
                    params.clear();
                }
                Node::FnType(Box::new(ret), params)
            }
            b'D' if self.peek_at(1) == b'p' => {
                self.at += 2;
                Node::Expansion(Box::new(self.typ()?))
            }
            _ => return None,
        };
        self.subs.push(t.clone());
        Some(t)
    }

    /// An encoding: the whole name (`top`), or a local name's function, which ends at `E`.
    fn encoding(&mut self, top: bool) -> Option<Node> {
        if matches!(self.peek(), b'T' | b'G') {
            return None;
        }
        let (name, is_template, quals) = self.name()?;
        // `T_` in the signature: the function's own template arguments.
        if let Node::Template(_, args) = &name {
            self.template_args = args.clone();
        }
        let end = |p: &Self| p.at == p.s.len() || p.peek() == b'.' || (!top && p.peek() == b'E');
        if end(self) {
            if !top {
                // A local name's enclosing entity that is not a function.
                return (quals.is_empty() && !is_template).then_some(name);
            }
            if !quals.is_empty() || is_template {
                return None;
            }
            let clones = self.clones()?;
            if !clones.is_empty() {
                return None;
            }
            return Some(name);
        }
        // Constructors and destructors (templates too) have no return type.
        let mut last = &name;
        if let Node::Template(base, _) = last {
            last = base;
        }
        if let Node::Qual(_, r) = last {
            last = r;
        }
        let structor = matches!(last, Node::Structor { .. });
        let mut ret = if is_template && !structor {
            Some(Box::new(self.typ()?))
        } else {
            None
        };
        if !top {
            ret = None;
        }
        let mut params = Vec::new();
        let mut any = false;
        while !end(self) {
            let t = self.typ()?;
            push_expanded(&mut params, t)?;
            any = true;
        }
        if !any || params.is_empty() {
            return None;
        }
        if params.len() == 1 && matches!(params[0], Node::Builtin(b'v')) {
            params.clear();
        } else if params.iter().any(|p| matches!(p, Node::Builtin(b'v'))) {
            return None;
        }
        let clones = if top { self.clones()? } else { Vec::new() };
        Some(Node::Function {
            name: Box::new(name),
            ret,
            params,
            quals,
            clones,
        })
    }

    /// `.constprop.0`, `.isra.0`, …: libiberty's clone suffixes.
    fn clones(&mut self) -> Option<Vec<String>> {
        let mut out = Vec::new();
        while self.peek() == b'.' {
            let start = self.at;
            let c = self.peek_at(1);
            if c.is_ascii_lowercase() || c == b'_' {
                self.at += 2;
                while self.peek().is_ascii_lowercase() || self.peek() == b'_' {
                    self.at += 1;
                }
            } else if c.is_ascii_digit() {
                self.at += 1;
            } else {
                return None;
            }
            while self.peek() == b'.' && self.peek_at(1).is_ascii_digit() {
                self.at += 1;
                while self.peek().is_ascii_digit() {
                    self.at += 1;
                }
            }
            if self.at == start + 1 {
                return None;
            }
            out.push(
                std::str::from_utf8(&self.s[start..self.at])
                    .ok()?
                    .to_string(),
            );
        }
        (self.at == self.s.len()).then_some(out)
    }
}

/// Push `node` onto `list`, a pack expansion as one element per member of its pack (`None`
/// where the pattern holds no pack, or a pack appears where it is not expanded).
fn push_expanded(list: &mut Vec<Node>, node: Node) -> Option<()> {
    match node {
        Node::Expansion(pattern) => {
            let members = find_pack(&pattern)?.to_vec();
            for m in members {
                list.push(replace_pack(&pattern, &m));
            }
        }
        other => list.push(other),
    }
    Some(())
}

fn find_pack(n: &Node) -> Option<&[Node]> {
    match n {
        Node::Pack(items) => Some(items),
        Node::Modified(inner, _) => find_pack(inner),
        _ => None,
    }
}

fn replace_pack(n: &Node, with: &Node) -> Node {
    match n {
        Node::Pack(_) => with.clone(),
        Node::Modified(inner, m) => match (replace_pack(inner, with), *m) {
            (
                Node::Modified(base, inner_m @ (Modifier::Ref | Modifier::RvalueRef)),
                Modifier::Ref | Modifier::RvalueRef,
            ) => {
                let k = if inner_m == Modifier::RvalueRef && *m == Modifier::RvalueRef {
                    Modifier::RvalueRef
                } else {
                    Modifier::Ref
                };
                Node::Modified(base, k)
            }
            (r, m) => Node::Modified(Box::new(r), m),
        },
        other => other.clone(),
    }
}

fn flatten_packs<'n>(args: &'n [Node], out: &mut Vec<&'n Node>) {
    for a in args {
        match a {
            Node::Pack(items) => flatten_packs(items, out),
            other => out.push(other),
        }
    }
}

fn last_source_name(n: &Node) -> Option<String> {
    match n {
        Node::Name(s) => Some(s.rsplit("::").next().unwrap_or(s).to_string()),
        Node::Qual(_, r) => last_source_name(r),
        Node::Template(b, _) => last_source_name(b),
        _ => None,
    }
}

/// The two ways of printing.
struct Printer {
    java: bool,
    out: String,
}

impl Printer {
    fn builtin(&mut self, c: u8) {
        let (cxx, java) = match c {
            b'a' => ("signed char", "signed char"),
            b'b' => ("bool", "boolean"),
            b'c' => ("char", "byte"),
            b'd' => ("double", "double"),
            b'e' => ("long double", "long double"),
            b'f' => ("float", "float"),
            b'g' => ("__float128", "__float128"),
            b'h' => ("unsigned char", "unsigned char"),
            b'i' => ("int", "int"),
            b'j' => ("unsigned int", "unsigned"),
            b'l' => ("long", "long"),
            b'm' => ("unsigned long", "unsigned long"),
            b'n' => ("__int128", "__int128"),
            b'o' => ("unsigned __int128", "unsigned __int128"),
            b's' => ("short", "short"),
            b't' => ("unsigned short", "unsigned short"),
            b'v' => ("void", "void"),
            b'w' => ("wchar_t", "char"),
            b'x' => ("long long", "long"),
            b'y' => ("unsigned long long", "unsigned long long"),
            _ => ("...", "..."),
        };
        self.out.push_str(if self.java { java } else { cxx });
    }

    fn modifier(&mut self, m: Modifier) {
        self.out.push_str(match m {
            Modifier::Pointer if self.java => "",
            Modifier::Pointer => "*",
            Modifier::Ref => "&",
            Modifier::RvalueRef => "&&",
            Modifier::Const => " const",
            Modifier::Volatile => " volatile",
            Modifier::Restrict => " restrict",
        });
    }

    /// `items`, separated by `, `.
    fn list<'n>(&mut self, items: impl IntoIterator<Item = &'n Node>) {
        for (i, a) in items.into_iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.node(a);
        }
    }

    fn node(&mut self, n: &Node) {
        match n {
            Node::Name(s) => self.out.push_str(s),
            Node::Qual(l, r) => {
                self.node(l);
                self.out.push_str(if self.java { "." } else { "::" });
                self.node(r);
            }
            Node::Template(base, args) => {
                if self.java && matches!(&**base, Node::Name(s) if s == "JArray") {
                    if let [arg] = args.as_slice() {
                        self.node(arg);
                        self.out.push_str("[]");
                        return;
                    }
                }
                self.node(base);
                if self.out.ends_with('<') {
                    self.out.push(' ');
                }
                self.out.push('<');
                // Packs print in line; an empty one prints nothing, not even a comma.
                let mut flat = Vec::new();
                flatten_packs(args, &mut flat);
                self.list(flat);
                if self.out.ends_with('>') {
                    self.out.push(' ');
                }
                self.out.push('>');
            }
            Node::Structor { dtor, name } => {
                if *dtor {
                    self.out.push('~');
                }
                self.out.push_str(name);
            }
            Node::Operator(op) => {
                self.out.push_str("operator");
                if op.as_bytes()[0].is_ascii_lowercase() {
                    self.out.push(' ');
                }
                self.out.push_str(op);
            }
            Node::Builtin(c) => self.builtin(*c),
            Node::FnType(ret, params) => {
                self.node(ret);
                self.out.push_str(" (");
                self.list(params.iter());
                self.out.push(')');
            }
            Node::Lambda(params, n) => {
                self.out.push_str("{lambda(");
                self.list(params.iter());
                self.out.push_str(")#");
                self.out.push_str(&n.to_string());
                self.out.push('}');
            }
            Node::Pack(items) => {
                self.list(items.iter());
            }
            Node::Expansion(_) => self.out.push_str("..."),
            Node::Literal {
                ty,
                negative,
                value,
            } => {
                let suffix = match **ty {
                    Node::Builtin(b'i') => Some(""),
                    Node::Builtin(b'j') => Some("u"),
                    Node::Builtin(b'l') => Some("l"),
                    Node::Builtin(b'm') => Some("ul"),
                    Node::Builtin(b'x') => Some("ll"),
                    Node::Builtin(b'y') => Some("ull"),
                    _ => None,
                };
                if let Some(suffix) = suffix {
                    if *negative {
                        self.out.push('-');
                    }
                    self.out.push_str(value);
                    self.out.push_str(suffix);
                    return;
                }
                if matches!(**ty, Node::Builtin(b'b')) && !negative {
                    match value.as_str() {
                        "0" => return self.out.push_str("false"),
                        "1" => return self.out.push_str("true"),
                        _ => {}
                    }
                }
                let float = matches!(**ty, Node::Builtin(b'd' | b'e' | b'f' | b'g'));
                self.out.push('(');
                self.node(ty);
                self.out.push(')');
                if *negative {
                    self.out.push('-');
                }
                if float {
                    self.out.push('[');
                }
                self.out.push_str(value);
                if float {
                    self.out.push(']');
                }
            }
            Node::Modified(..) => {
                let mut mods = Vec::new();
                let mut base = n;
                while let Node::Modified(inner, m) = base {
                    mods.push(*m);
                    base = inner;
                }
                self.node(base);
                for m in mods.into_iter().rev() {
                    self.modifier(m);
                }
            }
            Node::Function {
                name,
                ret,
                params,
                quals,
                clones,
            } => {
                if let (Some(r), false) = (ret, self.java) {
                    self.node(r);
                    self.out.push(' ');
                }
                self.node(name);
                self.out.push('(');
                self.list(params.iter());
                self.out.push(')');
                for &q in quals {
                    self.modifier(q);
                }
                if let (Some(r), true) = (ret, self.java) {
                    self.node(r);
                }
                for c in clones {
                    self.out.push_str(" [clone ");
                    self.out.push_str(c);
                    self.out.push(']');
                }
            }
        }
    }
}

/// The C++ and the Java rendering of the Itanium name `sym` (`_Z…`), when the name is in the
/// part of the grammar parsed here.
fn both(sym: &str) -> Option<(String, String)> {
    let body = sym.strip_prefix("_Z")?;
    let mut p = Parser {
        s: body.as_bytes(),
        at: 0,
        subs: Vec::new(),
        template_args: Vec::new(),
        last_name: String::new(),
    };
    let tree = p.encoding(true)?;
    let print = |java| {
        let mut pr = Printer {
            java,
            out: String::new(),
        };
        pr.node(&tree);
        pr.out
    };
    Some((print(false), print(true)))
}

/// `java_demangle_v3(sym)` for a name starting `_Z`: `Some(Some(text))`; `Some(None)` where
/// libiberty does not demangle it either; `None` where it is not reproduced (the C++ rendering
/// of the tree parsed here is not `cxx`, libiberty's C++ demangling of the name).
pub fn java_demangle(sym: &str, cxx: Option<&str>) -> Option<Option<String>> {
    let Some(cxx) = cxx else {
        // libiberty rejects the name in every mode.
        return Some(None);
    };
    let (mine, java) = both(sym)?;
    (mine == cxx).then_some(Some(java))
}

#[cfg(test)]
mod tests {
    use super::both;

    #[test]
    fn java_renderings() {
        let j = |s: &str| both(s).map(|(_, j)| j);
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
    }
}
