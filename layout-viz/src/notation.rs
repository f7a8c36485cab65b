//! CuTe's printed notation, both ways: `Display` for `IntTuple`, `Layout`, `Swizzle`,
//! `ComposedLayout`, `AnyLayout` and `Tiler` in the format of CuTe's `print`, and parsers
//! that read it back (static integers such as `_8` are accepted and read as plain ones).
//!
//! Grammar (whitespace allowed between tokens):
//! ```text
//! int        := ['_'] ['-'] digits
//! int_tuple  := int | '(' int_tuple (',' int_tuple)* ')'
//! layout     := int_tuple ':' int_tuple
//! swizzle    := ('Sw' | 'Swizzle') '<' int ',' int ',' int '>'
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
    /// A swizzle as a reader types it (`parse_swizzle_spec`) that is not one: the text as
    /// typed, and why.
    #[error("swizzle `{input}`: {why}")]
    Swizzle { input: String, why: String },
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

/// Reads a swizzle `Sw<B,M,S>` (or CuTe's spelling `Swizzle<B,M,S>`).
pub fn parse_swizzle(s: &str) -> Result<Swizzle, NotationError> {
    let mut p = Parser::new(s);
    let sw = p.swizzle()?;
    p.end()?;
    Ok(sw)
}

/// Reads a swizzle as a reader types one in the playground or gives it to the CLI's
/// `--swizzle`: `B,M,S`, `Sw<B,M,S>` or CuTe's `Swizzle<B,M,S>`, spaces allowed anywhere
/// between the parts. Empty text is no swizzle. A bad one is refused in the reader's own
/// text, naming the parameter out of range: "swizzle `9,3,3`: B = 9 is out of range ...".
pub fn parse_swizzle_spec(text: &str) -> Result<Option<Swizzle>, NotationError> {
    let typed = text.trim();
    if typed.is_empty() {
        return Ok(None);
    }
    let refuse = |why: String| NotationError::Swizzle {
        input: typed.to_string(),
        why,
    };
    let bad_form = |_: NotationError| {
        refuse(
            "expected B,M,S or CuTe's Swizzle<B,M,S>, three integers, e.g. 3,3,3 or Swizzle<3,3,3>"
                .to_string(),
        )
    };
    // The parser's own reading of `Sw<B,M,S>` and `Swizzle<B,M,S>`, or of the bare three.
    let mut p = Parser::new(typed);
    let (b, m, s) = if typed.starts_with("Sw") {
        p.swizzle_params().map(|(b, m, s, _)| (b, m, s))
    } else {
        p.three_ints()
    }
    .and_then(|bms| p.end().map(|()| bms))
    .map_err(bad_form)?;
    Swizzle::check(b, m, s).map_err(refuse)?;
    Ok(Some(Swizzle::new(b as u32, m as u32, s as i32)))
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
        let (b, m, s, start) = self.swizzle_params()?;
        let typed = &self.input[start..self.pos];
        Swizzle::check(b, m, s)
            .or_else(|why| self.err(start, format!("swizzle {typed}: {why}")))?;
        Ok(Swizzle::new(b as u32, m as u32, s as i32))
    }

    /// `Sw<B,M,S>` or `Swizzle<B,M,S>`, unchecked, with where it started.
    fn swizzle_params(&mut self) -> Result<(i64, i64, i64, usize), NotationError> {
        self.skip_ws();
        let start = self.pos;
        let rest = &self.input[self.pos..];
        if rest.starts_with("Swizzle") {
            self.pos += "Swizzle".len();
        } else if rest.starts_with("Sw") {
            self.pos += 2;
        } else {
            return self.err(start, "expected a swizzle 'Sw<B,M,S>' or 'Swizzle<B,M,S>'");
        }
        let name = self.input[start..self.pos].to_string();
        self.expect('<', &format!("after '{name}'"))?;
        let (b, m, s) = self.three_ints()?;
        self.expect('>', "closing the swizzle")?;
        Ok((b, m, s, start))
    }

    /// A swizzle's `B,M,S`.
    fn three_ints(&mut self) -> Result<(i64, i64, i64), NotationError> {
        let b = self.int()?;
        self.expect(',', "between a swizzle's B and M")?;
        let m = self.int()?;
        self.expect(',', "between a swizzle's M and S")?;
        let s = self.int()?;
        Ok((b, m, s))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cute_spelling_swizzle_is_read_like_b_m_s() {
        let want = Some(Swizzle::new(3, 3, 3));
        for typed in [
            "3,3,3",
            " 3, 3,3 ",
            "Sw<3,3,3>",
            "Swizzle<3,3,3>",
            "Swizzle<3, 3, 3>",
            " Swizzle < 3 ,3, 3 > ",
        ] {
            assert_eq!(parse_swizzle_spec(typed).unwrap(), want, "{typed}");
        }
        assert_eq!(parse_swizzle_spec("").unwrap(), None);
        assert_eq!(parse_swizzle_spec("  ").unwrap(), None);
        assert_eq!(
            parse_swizzle_spec("Swizzle<2,0,-3>").unwrap(),
            Some(Swizzle::new(2, 0, -3))
        );
    }

    #[test]
    fn cute_spelling_swizzle_in_a_layout() {
        let a = parse_any_layout("Swizzle<3, 3, 3> o _0 o (8,64):(64,1)").unwrap();
        let b = parse_any_layout("Sw<3,3,3> o _0 o (8,64):(64,1)").unwrap();
        assert_eq!(a, b);
        assert_eq!(
            parse_swizzle("Swizzle<2,4,3>").unwrap(),
            Swizzle::new(2, 4, 3)
        );
    }

    #[test]
    fn a_bad_swizzle_is_refused_in_the_typed_text_naming_the_parameter() {
        let msg = |t: &str| parse_swizzle_spec(t).unwrap_err().to_string();
        assert_eq!(
            msg("9,3,3"),
            "swizzle `9,3,3`: B = 9 is out of range for S = 3: |S| must be at least B (CuTe's rule), or the B bits read and the B bits they flip would overlap"
        );
        assert_eq!(
            msg("Swizzle<3, 3, 2>"),
            "swizzle `Swizzle<3, 3, 2>`: B = 3 is out of range for S = 2: |S| must be at least B (CuTe's rule), or the B bits read and the B bits they flip would overlap"
        );
        assert!(msg("-1,3,3").starts_with("swizzle `-1,3,3`: B = -1 is out of range"));
        assert!(msg("3,70,3").starts_with("swizzle `3,70,3`: M = 70 is out of range"));
        assert!(msg("3,3,99").starts_with("swizzle `3,3,99`: S = 99 is out of range"));
        assert!(
            msg("20,20,30").starts_with("swizzle `20,20,30`: B + M + |S| = 70 is out of range")
        );
        for bad in [
            "3,3",
            "3,3,3,3",
            "x,3,3",
            "Swizzle<3,3,3",
            "Swizzle 3,3,3",
            "Swiz<3,3,3>",
        ] {
            assert_eq!(
                msg(bad),
                format!(
                    "swizzle `{bad}`: expected B,M,S or CuTe's Swizzle<B,M,S>, three integers, e.g. 3,3,3 or Swizzle<3,3,3>"
                ),
            );
        }
        // In a layout, the message quotes the swizzle as written and points at it.
        let e = parse_any_layout("Swizzle<9,3,3> o (8,64):(64,1)")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("swizzle Swizzle<9,3,3>: B = 9 is out of range for S = 3"),
            "{e}"
        );
    }
}
