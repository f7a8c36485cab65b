//! A Nsight Compute source page of one kernel (`ncu --page source --csv --print-source
//! sass`), joined to the kernel's listing instruction by instruction: how often each
//! instruction was executed, and the warp samples that fell on it.
//!
//! The page's first line names the kernel, its second the columns; then one row per
//! instruction, in address order. Its disassembler and cuobjdump's differ in how they print
//! a few things (`.reuse` flags, absolute branch targets, the order of `UTMALDG`'s
//! operands), so the join compares each instruction's opcode and the set of its operands,
//! with every hexadecimal number taken as equal.

use crate::listing::Function;
use std::fmt;

/// One instruction's row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The instruction as Nsight Compute printed it.
    pub source: String,
    /// Warp-level executions.
    pub executed: u64,
    /// Warp samples whose program counter was this instruction, whatever the warp's state.
    pub samples: u64,
    /// Of those, the samples of a warp stalled on `wait`: held by the stall count of the
    /// instruction before (a fixed latency), not by a scoreboard or a barrier.
    pub wait: Option<u64>,
}

/// The rows of a source page.
#[derive(Clone, Debug)]
pub struct SourcePage {
    pub kernel: String,
    pub rows: Vec<Row>,
}

/// Why a page could not be read or joined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileError(pub String);

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ProfileError {}

fn number(s: &str) -> Option<u64> {
    let s: String = s.chars().filter(|c| *c != ',').collect();
    s.trim().parse().ok()
}

impl SourcePage {
    pub fn parse(text: &str) -> Result<Self, ProfileError> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(text.as_bytes());
        let mut records = reader.records();
        let err = |m: String| ProfileError(m);
        let first = records
            .next()
            .ok_or_else(|| err("the source page is empty".into()))?
            .map_err(|e| err(e.to_string()))?;
        if first.get(0) != Some("Kernel Name") {
            return Err(err(format!(
                "a source page starts with \"Kernel Name\", this one with {:?} (write it with `ncu --import FILE --page source --csv --print-source sass`)",
                first.get(0).unwrap_or("")
            )));
        }
        let kernel = first.get(1).unwrap_or("").to_string();
        let header = records
            .next()
            .ok_or_else(|| err("the source page has no column names".into()))?
            .map_err(|e| err(e.to_string()))?;
        let column = |name: &str| header.iter().position(|h| h == name);
        let source = column("Source").ok_or_else(|| err("no `Source` column".into()))?;
        let executed = column("Instructions Executed").ok_or_else(|| {
            err("no `Instructions Executed` column (collect the SourceCounters section)".into())
        })?;
        let samples = column("Warp Stall Sampling (All Samples)").or_else(|| column("# Samples"));
        let wait = column("stall_wait");
        let mut rows = Vec::new();
        for record in records {
            let record = record.map_err(|e| err(e.to_string()))?;
            let get = |i: usize| record.get(i).unwrap_or("");
            rows.push(Row {
                source: get(source).trim().to_string(),
                executed: number(get(executed)).unwrap_or(0),
                samples: samples.and_then(|i| number(get(i))).unwrap_or(0),
                wait: wait.and_then(|i| number(get(i))),
            });
        }
        Ok(Self { kernel, rows })
    }

    /// The rows, one per instruction of `f`, after checking that each row is that
    /// instruction.
    pub fn join(&self, f: &Function) -> Result<&[Row], ProfileError> {
        if self.rows.len() != f.instructions.len() {
            return Err(ProfileError(format!(
                "the source page of {} has {} instructions, the listing's {} has {}: not the same binary",
                self.kernel,
                self.rows.len(),
                f.name,
                f.instructions.len()
            )));
        }
        let differ: Vec<String> = f
            .instructions
            .iter()
            .zip(&self.rows)
            .filter(|(ins, row)| comparable(&ins.text()) != comparable(&row.source))
            .take(3)
            .map(|(ins, row)| format!("{ins}  /  {}", row.source))
            .collect();
        if !differ.is_empty() {
            return Err(ProfileError(format!(
                "the source page is not of this binary: its instructions differ from the listing's, first at\n  {}",
                differ.join("\n  ")
            )));
        }
        Ok(&self.rows)
    }
}

/// An instruction's text in a form both disassemblers agree on: the guard and opcode, then
/// the operands sorted, without `.reuse`, every hexadecimal number as `#`.
fn comparable(text: &str) -> String {
    let text = text.replace(".reuse", "");
    let mut words = text.split_whitespace();
    let mut head = Vec::new();
    let mut rest = String::new();
    for w in words.by_ref() {
        head.push(w.to_string());
        if !w.starts_with('@') {
            break;
        }
    }
    for w in words {
        rest.push_str(w);
        rest.push(' ');
    }
    let mut operands: Vec<String> = rest
        .split([',', ' '])
        .map(|o| hex_as_hash(o.trim()))
        .filter(|o| !o.is_empty())
        .collect();
    operands.sort();
    format!("{} {}", head.join(" "), operands.join(","))
}

fn hex_as_hash(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '0' && chars.peek() == Some(&'x') {
            chars.next();
            while chars.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                chars.next();
            }
            out.push('#');
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::{parse_listing, tests::LOOP};

    fn page(sources: &[&str]) -> String {
        let mut s = String::from("\"Kernel Name\",\"toy_bf16_d128\",\n");
        s.push_str("\"Address\",\"Source\",\"Warp Stall Sampling (All Samples)\",\"Instructions Executed\",\"stall_wait\"\n");
        for (i, src) in sources.iter().enumerate() {
            s.push_str(&format!(
                "\"0x7f00{:04x}\",\"      {src}\",\"{}\",\"1,024\",\"{}\"\n",
                i * 16,
                i,
                i / 2
            ));
        }
        s
    }

    const TOY_AS_NCU: [&str; 13] = [
        "MOV R1, c[0x0][0x28]",
        "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R2",
        "@!P0  BRA 0x7f0000a0",
        "MUFU.EX2 R4, R4",
        "FADD R5, R4, R5",
        "@P1  BRA 0x7f000070",
        "FMUL R6, R6, R7",
        "ISETP.NE.AND P2, PT, R8, RZ, PT",
        "@P2  BRA 0x7f000010",
        "EXIT",
        "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R2",
        "@!P0  BRA 0x7f0000a0",
        "BRA 0x7f000030",
    ];

    #[test]
    fn a_page_joins_the_listing_it_was_profiled_from() {
        let f = parse_listing(LOOP).unwrap().remove(0);
        let p = SourcePage::parse(&page(&TOY_AS_NCU)).unwrap();
        assert_eq!(p.kernel, "toy_bf16_d128");
        let rows = p.join(&f).unwrap();
        assert_eq!(
            rows[3],
            Row {
                source: "MUFU.EX2 R4, R4".into(),
                executed: 1024,
                samples: 3,
                wait: Some(1)
            }
        );
    }

    #[test]
    fn a_page_of_another_binary_is_refused() {
        let f = parse_listing(LOOP).unwrap().remove(0);
        let mut other = TOY_AS_NCU;
        other[4] = "FADD R5, R4, R6";
        let e = SourcePage::parse(&page(&other))
            .unwrap()
            .join(&f)
            .unwrap_err();
        assert!(e.0.contains("FADD R5, R4, R5"), "{e}");
        let e = SourcePage::parse(&page(&TOY_AS_NCU[..12]))
            .unwrap()
            .join(&f)
            .unwrap_err();
        assert!(e.0.contains("not the same binary"), "{e}");
        assert!(
            SourcePage::parse("\"ID\",\"x\"\n")
                .unwrap_err()
                .0
                .contains("Kernel Name")
        );
    }

    #[test]
    fn the_two_printers_agree_after_comparable() {
        assert_eq!(
            comparable("UTMALDG.4D [UR8], [UR6], desc[URZ]"),
            comparable("UTMALDG.4D desc[URZ], [UR8], [UR6]")
        );
        assert_eq!(comparable("IABS R0, R8.reuse"), comparable("IABS R0, R8"));
        assert_ne!(comparable("IABS R0, R8"), comparable("IABS R0, R9"));
        assert_eq!(
            comparable("RET.REL.NODEC R8 0x0"),
            comparable("RET.REL.NODEC R8, 0x7ff6af7a0000")
        );
    }
}
