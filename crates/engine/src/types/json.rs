//! # JSON documents
//!
//! The JSON value model MySQL 8.0 uses, shared by the JSON column type
//! (a stored document is validated and normalized here) and the SQL
//! layer's JSON functions:
//!
//! * [`parse_text`] reads RFC 8259 text with MySQL's error reasons and
//!   positions (`"Invalid value." at position 3`), nesting at most
//!   [`MAX_DEPTH`];
//! * [`print`] writes a value as MySQL prints one: `{"a": 1, "b": [1, 2]}`,
//!   one space after `:` and `,`, object keys sorted by length then by
//!   bytes (a duplicate key keeps its last value), doubles with a `.0`
//!   when whole, non-ASCII characters as they are.
//!
//! A JSON column stores the document in a binary form (`jsonb.rs`, after
//! MySQL's); values travel as the printed text, which is what reading a
//! stored document gives back (rows written before the binary form hold
//! that text itself). Numbers
//! keep their kind: integers (signed or unsigned 64-bit), doubles, and
//! decimals from SQL kept as their text.

/// Deepest nesting a document may have (3157 beyond).
pub const MAX_DEPTH: usize = 100;

/// A JSON value. Objects keep MySQL's key order (length, then bytes).
#[derive(Debug, Clone, PartialEq)]
pub enum J {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Double(f64),
    /// A DECIMAL from SQL, kept as its text.
    Dec(String),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

/// MySQL's object key order: by length, then by bytes.
pub fn key_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

impl J {
    /// Inserts or replaces a member, keeping the order.
    pub fn put(members: &mut Vec<(String, J)>, k: String, v: J) {
        match members.binary_search_by(|(x, _)| key_order(x, &k)) {
            Ok(i) => members[i].1 = v,
            Err(i) => members.insert(i, (k, v)),
        }
    }

    /// JSON_TYPE's answer.
    pub fn type_name(&self) -> &'static str {
        match self {
            J::Null => "NULL",
            J::Bool(_) => "BOOLEAN",
            J::Int(_) => "INTEGER",
            J::UInt(_) => "UNSIGNED INTEGER",
            J::Double(_) => "DOUBLE",
            J::Dec(_) => "DECIMAL",
            J::Str(_) => "STRING",
            J::Arr(_) => "ARRAY",
            J::Obj(_) => "OBJECT",
        }
    }

    /// JSON_DEPTH's answer.
    pub fn depth(&self) -> i64 {
        match self {
            J::Arr(a) if !a.is_empty() => 1 + a.iter().map(J::depth).max().unwrap_or(0),
            J::Obj(o) if !o.is_empty() => 1 + o.iter().map(|(_, v)| v.depth()).max().unwrap_or(0),
            _ => 1,
        }
    }

    /// A number's value as a double.
    pub fn num(&self) -> Option<f64> {
        match self {
            J::Int(i) => Some(*i as f64),
            J::UInt(u) => Some(*u as f64),
            J::Double(d) => Some(*d),
            J::Dec(s) => s.parse().ok(),
            _ => None,
        }
    }
}

// ------------------------------------------------------------- printing

/// Appends `s` as a JSON string literal.
pub fn quote_into(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A JSON double as MySQL prints it (`1.0`, `1.5e300`).
pub fn double_text(d: f64) -> String {
    if d.is_finite() && d.fract() == 0.0 && d.abs() < 1e15 {
        format!("{d:.1}")
    } else {
        super::value::format_double(d)
    }
}

/// The document as MySQL prints a JSON value.
pub fn print(j: &J) -> String {
    let mut out = String::new();
    print_into(j, &mut out);
    out
}

/// [`print`] appending to `out`.
pub fn print_into(j: &J, out: &mut String) {
    match j {
        J::Null => out.push_str("null"),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Int(i) => out.push_str(&i.to_string()),
        J::UInt(u) => out.push_str(&u.to_string()),
        J::Double(d) => out.push_str(&double_text(*d)),
        J::Dec(s) => out.push_str(s),
        J::Str(s) => quote_into(s, out),
        J::Arr(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                print_into(x, out);
            }
            out.push(']');
        }
        J::Obj(o) => {
            out.push('{');
            for (i, (k, v)) in o.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                quote_into(k, out);
                out.push_str(": ");
                print_into(v, out);
            }
            out.push('}');
        }
    }
}

// -------------------------------------------------------------- parsing

/// A cursor over JSON text: `s` the bytes, `i` the next position.
pub struct Parser<'a> {
    pub s: &'a [u8],
    pub i: usize,
}

/// A parse failure: MySQL's reason text and the byte position; the
/// reason `"depth"` means nesting beyond [`MAX_DEPTH`].
pub type PResult<T> = Result<T, (&'static str, usize)>;

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    /// One value; `depth` counts the arrays and objects around it. As
    /// MySQL's parser, only containers count toward [`MAX_DEPTH`]: a
    /// hundred nested arrays are a document, the 101st is refused.
    fn value(&mut self, depth: usize) -> PResult<J> {
        self.ws();
        let Some(&c) = self.s.get(self.i) else {
            return Err(if self.i == 0 {
                ("The document is empty.", 0)
            } else {
                ("Invalid value.", self.i)
            });
        };
        if matches!(c, b'{' | b'[') && depth >= MAX_DEPTH {
            return Err(("depth", self.i));
        }
        match c {
            b'{' => {
                self.i += 1;
                let mut m: Vec<(String, J)> = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(J::Obj(m));
                }
                loop {
                    self.ws();
                    if self.s.get(self.i) != Some(&b'"') {
                        return Err(("Missing a name for object member.", self.i));
                    }
                    let k = self.string()?;
                    self.ws();
                    if self.s.get(self.i) != Some(&b':') {
                        return Err(("Missing a colon after a name of object member.", self.i));
                    }
                    self.i += 1;
                    let v = self.value(depth + 1)?;
                    J::put(&mut m, k, v);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(J::Obj(m));
                        }
                        _ => {
                            return Err(("Missing a comma or '}' after an object member.", self.i))
                        }
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut a = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(J::Arr(a));
                }
                loop {
                    a.push(self.value(depth + 1)?);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(J::Arr(a));
                        }
                        _ => {
                            return Err(("Missing a comma or ']' after an array element.", self.i))
                        }
                    }
                }
            }
            b'"' => Ok(J::Str(self.string()?)),
            b't' => self.word("true", J::Bool(true)),
            b'f' => self.word("false", J::Bool(false)),
            b'n' => self.word("null", J::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(("Invalid value.", self.i)),
        }
    }

    fn word(&mut self, w: &str, j: J) -> PResult<J> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(j)
        } else {
            Err(("Invalid value.", self.i))
        }
    }

    fn number(&mut self) -> PResult<J> {
        let st = self.i;
        if self.s.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        let digits = |p: &mut Self| {
            let s = p.i;
            while p.i < p.s.len() && p.s[p.i].is_ascii_digit() {
                p.i += 1;
            }
            p.i - s
        };
        if digits(self) == 0 {
            return Err(("Invalid value.", st));
        }
        let mut float = false;
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            float = true;
            if digits(self) == 0 {
                return Err(("Missing fraction part in number.", self.i));
            }
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            float = true;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if digits(self) == 0 {
                return Err(("Missing exponent in number.", self.i));
            }
        }
        let t = std::str::from_utf8(&self.s[st..self.i]).map_err(|_| ("Invalid value.", st))?;
        if !float {
            if let Ok(i) = t.parse::<i64>() {
                return Ok(J::Int(i));
            }
            if let Ok(u) = t.parse::<u64>() {
                return Ok(J::UInt(u));
            }
        }
        match t.parse::<f64>() {
            Ok(d) if d.is_finite() => Ok(J::Double(d)),
            _ => Err(("Number too big to be stored in double.", st)),
        }
    }

    /// A string literal starting at `i` (at its opening quote).
    pub fn string(&mut self) -> PResult<String> {
        let st = self.i;
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.i) else {
                return Err(("Missing a closing quotation mark in string.", st));
            };
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = self.s.get(self.i) else {
                        return Err(("Invalid escape character in string.", self.i));
                    };
                    self.i += 1;
                    match e {
                        b'"' => out.push(b'"'),
                        b'\\' => out.push(b'\\'),
                        b'/' => out.push(b'/'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => {
                            let mut cp = self.hex4()?;
                            if (0xD800..0xDC00).contains(&cp) {
                                if self.s.get(self.i) == Some(&b'\\')
                                    && self.s.get(self.i + 1) == Some(&b'u')
                                {
                                    self.i += 2;
                                    let lo = self.hex4()?;
                                    if !(0xDC00..0xE000).contains(&lo) {
                                        return Err((
                                            "The surrogate pair in string is invalid.",
                                            self.i,
                                        ));
                                    }
                                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                } else {
                                    return Err((
                                        "The surrogate pair in string is invalid.",
                                        self.i,
                                    ));
                                }
                            }
                            let ch = char::from_u32(cp).ok_or((
                                "Incorrect hex digit after \\u escape in string.",
                                self.i,
                            ))?;
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => return Err(("Invalid escape character in string.", self.i - 1)),
                    }
                }
                c if c < 0x20 => return Err(("Invalid encoding in string.", self.i - 1)),
                c => out.push(c),
            }
        }
        String::from_utf8(out).map_err(|_| ("Invalid encoding in string.", st))
    }

    fn hex4(&mut self) -> PResult<u32> {
        let h = self
            .s
            .get(self.i..self.i + 4)
            .ok_or(("Incorrect hex digit after \\u escape in string.", self.i))?;
        let t = std::str::from_utf8(h)
            .map_err(|_| ("Incorrect hex digit after \\u escape in string.", self.i))?;
        let v = u32::from_str_radix(t, 16)
            .map_err(|_| ("Incorrect hex digit after \\u escape in string.", self.i))?;
        self.i += 4;
        Ok(v)
    }
}

/// Parses a whole JSON text (RFC 8259; whitespace around it allowed).
pub fn parse_text(s: &[u8]) -> PResult<J> {
    let mut p = Parser { s, i: 0 };
    let v = p.value(0)?;
    p.ws();
    if p.i < s.len() {
        return Err((
            "The document root must not be followed by other values.",
            p.i,
        ));
    }
    Ok(v)
}
