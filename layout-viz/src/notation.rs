//! CuTe's printed notation, both ways: `Display` for `IntTuple`, `Layout`, `Swizzle`,
//! `ComposedLayout`, `AnyLayout` and `Tiler` in the format of CuTe's `print`, and parsers
//! that read it back (static integers such as `_8` are accepted and read as plain ones).
//!
//! Grammar (whitespace allowed between tokens):
//! ```text
//! int        := ['_'] ['-'] digits
//! int_tuple  := int | '(' int_tuple (',' int_tuple)* ')'
//! layout     := int_tuple ':' int_tuple
//! swizzle    := 'Sw<' int ',' int ',' int '>'
//! any_layout := layout | swizzle 'o' [int 'o'] layout
//! tiler      := '_' | layout | int_tuple | '[' tiler (',' tiler)* ']'
//! ```
//! A bare `int_tuple` tiler is a by-mode tuple of compact tilers, `(8,4)` = `[8:1,4:1]`.

use std::fmt;

use crate::int_tuple::IntTuple;
use crate::layout::{Layout, LayoutError, Tiler};
use crate::swizzle::{AnyLayout, ComposedLayout, Swizzle};

/// A string that is not valid CuTe notation: where it failed and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotationError {
    /// The text does not follow the grammar; `pos` is a byte offset into `input`.
    #[error("{msg} at column {col}\n  {input}\n  {caret}^", col = pos + 1, caret = " ".repeat(input[..*pos].chars().count()))]
    Syntax {
        input: String,
        pos: usize,
        msg: String,
    },
    /// The text parses but does not describe a valid value (e.g. shape and stride differ).
    #[error("{input}: {source}")]
    Invalid { input: String, source: LayoutError },
}

impl fmt::Display for IntTuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntTuple::Int(v) => write!(f, "{v}"),
            IntTuple::Tuple(v) => {
                f.write_str("(")?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{x}")?;
                }
                f.write_str(")")
            }
        }
    }
}

impl fmt::Display for Layout {
    /// `shape:stride`, as CuTe's `print(layout)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.shape, self.stride)
    }
}

impl fmt::Display for Swizzle {
    /// `Sw<B,M,S>`, as CuTe's `print(Swizzle)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sw<{},{},{}>", self.bits, self.base, self.shift)
    }
}

impl fmt::Display for ComposedLayout {
    /// `Sw<B,M,S> o offset o layout`, as CuTe's `print(ComposedLayout)`; the usual zero
    /// offset is CuTe's static `_0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.offset == 0 {
            write!(f, "{} o _0 o {}", self.swizzle, self.layout)
        } else {
            write!(f, "{} o {} o {}", self.swizzle, self.offset, self.layout)
        }
    }
}

impl fmt::Display for AnyLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnyLayout::Plain(l) => l.fmt(f),
            AnyLayout::Swizzled(c) => c.fmt(f),
        }
    }
}

impl fmt::Display for Tiler {
    /// A layout as itself, `_` for "keep", `[t0,t1,...]` for a by-mode tiler (the CLI's
    /// syntax; CuTe prints a tile as a plain tuple).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tiler::Layout(l) => l.fmt(f),
            Tiler::Keep => f.write_str("_"),
            Tiler::ByMode(v) => {
                f.write_str("[")?;
                for (i, t) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// Reads an `IntTuple` such as `((2,4),_8)`.
pub fn parse_int_tuple(s: &str) -> Result<IntTuple, NotationError> {
    let mut p = Parser::new(s);
    let t = p.int_tuple()?;
    p.end()?;
    Ok(t)
}

/// Reads a layout `shape:stride`, e.g. `((2,4),8):((1,16),2)` or `(_8,_64):(_64,_1)`.
pub fn parse_layout(s: &str) -> Result<Layout, NotationError> {
    let mut p = Parser::new(s);
    let l = p.layout()?;
    p.end()?;
    Ok(l)
}

/// Reads a plain layout or a swizzled one, `Sw<3,3,3> o _0 o (8,64):(64,1)` (the offset
/// may be left out: `Sw<3,3,3> o (8,64):(64,1)`).
pub fn parse_any_layout(s: &str) -> Result<AnyLayout, NotationError> {
    let mut p = Parser::new(s);
    let l = p.any_layout()?;
    p.end()?;
    Ok(l)
}

/// Reads a swizzle `Sw<B,M,S>`.
pub fn parse_swizzle(s: &str) -> Result<Swizzle, NotationError> {
    let mut p = Parser::new(s);
    let sw = p.swizzle()?;
    p.end()?;
    Ok(sw)
}

/// Reads a tiler: a layout `8:2`, an integer `8` (= `8:1`), a shape `(8,4)` (by-mode,
/// = `[8:1,4:1]`), `_`, or a by-mode list `[8:1,_,(2,2):(1,4)]` whose items are tilers.
pub fn parse_tiler(s: &str) -> Result<Tiler, NotationError> {
    let mut p = Parser::new(s);
    let t = p.tiler()?;
    p.end()?;
    Ok(t)
}

/// Reads a layout, or a bare shape meaning its compact column-major layout (CuTe's
/// `make_layout(shape)`): `(8,4)` = `(8,4):(1,8)`.
pub fn parse_layout_or_shape(s: &str) -> Result<Layout, NotationError> {
    let mut p = Parser::new(s);
    let shape = p.int_tuple()?;
    let l = if p.eat(':') {
        let at = p.pos;
        let stride = p.int_tuple()?;
        p.make_layout(shape, stride, at)?
    } else {
        p.make_layout(
            shape.clone(),
            crate::int_tuple::compact_col_major(&shape, 1),
            0,
        )?
    };
    p.end()?;
    Ok(l)
}

/// A small recursive-descent parser over the notation; every error carries the byte
/// offset where reading stopped.
struct Parser<'a> {
    input: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn new(input: &'a str) -> Self {
        Parser { input, pos: 0 }
    }

    fn err<T>(&self, pos: usize, msg: impl Into<String>) -> Result<T, NotationError> {
        Err(NotationError::Syntax {
            input: self.input.to_string(),
            pos,
            msg: msg.into(),
        })
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.input[self.pos..].chars().next() {
            if !c.is_whitespace() {
                break;
            }
            self.pos += c.len_utf8();
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.input[self.pos..].chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char, what: &str) -> Result<(), NotationError> {
        if self.eat(c) {
            Ok(())
        } else {
            let found = self.describe_next();
            self.err(self.pos, format!("expected '{c}' {what}, found {found}"))
        }
    }

    fn describe_next(&mut self) -> String {
        match self.peek() {
            Some(c) => format!("'{c}'"),
            None => "the end of the input".to_string(),
        }
    }

    fn end(&mut self) -> Result<(), NotationError> {
        match self.peek() {
            None => Ok(()),
            Some(c) => self.err(self.pos, format!("unexpected '{c}' after a complete value")),
        }
    }

    fn int(&mut self) -> Result<i64, NotationError> {
        self.skip_ws();
        let start = self.pos;
        let bytes = self.input.as_bytes();
        let mut i = self.pos;
        if i < bytes.len() && bytes[i] == b'_' {
            i += 1;
        }
        let num_start = i;
        if i < bytes.len() && (bytes[i] == b'-' || bytes[i] == b'+') {
            i += 1;
        }
        let digits_start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i == digits_start {
            let found = self.describe_next();
            return self.err(start, format!("expected an integer, found {found}"));
        }
        match self.input[num_start..i].parse::<i64>() {
            Ok(v) => {
                self.pos = i;
                Ok(v)
            }
            Err(_) => self.err(start, "integer out of range"),
        }
    }

    fn int_tuple(&mut self) -> Result<IntTuple, NotationError> {
        if self.peek() == Some('(') {
            let open = self.pos;
            self.pos += 1;
            if self.peek() == Some(')') {
                return self.err(open, "empty tuple");
            }
            let mut v = vec![self.int_tuple()?];
            loop {
                if self.eat(',') {
                    v.push(self.int_tuple()?);
                } else if self.eat(')') {
                    return Ok(IntTuple::Tuple(v));
                } else {
                    let found = self.describe_next();
                    return self.err(
                        self.pos,
                        format!(
                            "expected ',' or ')' in the tuple opened at column {}, found {found}",
                            open + 1
                        ),
                    );
                }
            }
        }
        Ok(IntTuple::Int(self.int()?))
    }

    fn make_layout(
        &self,
        shape: IntTuple,
        stride: IntTuple,
        stride_pos: usize,
    ) -> Result<Layout, NotationError> {
        match Layout::try_new(shape, stride) {
            Ok(l) => Ok(l),
            Err(e @ LayoutError::NotCongruent { .. }) => self.err(stride_pos, e.to_string()),
            Err(source) => Err(NotationError::Invalid {
                input: self.input.to_string(),
                source,
            }),
        }
    }

    fn layout(&mut self) -> Result<Layout, NotationError> {
        let shape = self.int_tuple()?;
        self.expect(':', "between a layout's shape and its stride")?;
        self.skip_ws();
        let at = self.pos;
        let stride = self.int_tuple()?;
        self.make_layout(shape, stride, at)
    }

    fn swizzle(&mut self) -> Result<Swizzle, NotationError> {
        self.skip_ws();
        let start = self.pos;
        if !self.input[self.pos..].starts_with("Sw") {
            return self.err(start, "expected a swizzle 'Sw<B,M,S>'");
        }
        self.pos += 2;
        self.expect('<', "after 'Sw'")?;
        let b = self.int()?;
        self.expect(',', "between a swizzle's B and M")?;
        let m = self.int()?;
        self.expect(',', "between a swizzle's M and S")?;
        let s = self.int()?;
        self.expect('>', "closing the swizzle")?;
        if !(0..=62).contains(&b) || !(0..=62).contains(&m) || !(-62..=62).contains(&s) {
            return self.err(
                start,
                "swizzle parameters out of range (B, M in 0..=62, |S| <= 62)",
            );
        }
        Swizzle::try_new(b as u32, m as u32, s as i32).or_else(|e| self.err(start, e.to_string()))
    }

    /// Consumes the composition operator `o`, which must stand alone as a word.
    fn compose_op(&mut self) -> Result<(), NotationError> {
        self.skip_ws();
        let rest = &self.input[self.pos..];
        if rest.starts_with('o') && !rest[1..].starts_with(|c: char| c.is_alphanumeric()) {
            self.pos += 1;
            Ok(())
        } else {
            let found = self.describe_next();
            self.err(
                self.pos,
                format!("expected the composition operator 'o', found {found}"),
            )
        }
    }

    fn any_layout(&mut self) -> Result<AnyLayout, NotationError> {
        self.skip_ws();
        if !self.input[self.pos..].starts_with("Sw") {
            return Ok(AnyLayout::Plain(self.layout()?));
        }
        let swizzle = self.swizzle()?;
        self.compose_op()?;
        // Either "offset o layout" or directly the layout: an integer followed by 'o'.
        let save = self.pos;
        let offset = match self.int() {
            Ok(v) if self.compose_op().is_ok() => v,
            _ => {
                self.pos = save;
                0
            }
        };
        let layout = self.layout()?;
        Ok(AnyLayout::Swizzled(ComposedLayout {
            swizzle,
            offset,
            layout,
        }))
    }

    fn tiler(&mut self) -> Result<Tiler, NotationError> {
        match self.peek() {
            Some('[') => {
                let open = self.pos;
                self.pos += 1;
                if self.peek() == Some(']') {
                    return self.err(open, "empty tiler list");
                }
                let mut v = vec![self.tiler()?];
                loop {
                    if self.eat(',') {
                        v.push(self.tiler()?);
                    } else if self.eat(']') {
                        return Ok(Tiler::ByMode(v));
                    } else {
                        let found = self.describe_next();
                        return self.err(self.pos, format!("expected ',' or ']' in the tiler opened at column {}, found {found}", open + 1));
                    }
                }
            }
            Some('_')
                if !self.input[self.pos + 1..]
                    .starts_with(|c: char| c.is_ascii_digit() || c == '-') =>
            {
                self.pos += 1;
                Ok(Tiler::Keep)
            }
            _ => {
                let shape = self.int_tuple()?;
                if self.eat(':') {
                    self.skip_ws();
                    let at = self.pos;
                    let stride = self.int_tuple()?;
                    Ok(Tiler::Layout(self.make_layout(shape, stride, at)?))
                } else {
                    if shape.flatten().iter().any(|&s| s <= 0) {
                        return Err(NotationError::Invalid {
                            input: self.input.to_string(),
                            source: LayoutError::NonPositiveShape(shape),
                        });
                    }
                    Ok(crate::layout::IntoTiler::to_tiler(&shape))
                }
            }
        }
    }
}
