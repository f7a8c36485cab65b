//! The one data dependence that can be read off a listing without knowing every opcode's
//! operands: an arithmetic instruction of fixed latency whose result the very next
//! instruction reads. ptxas must hold the warp for the result's latency there, and the only
//! way it can is the stall count, so over a whole kernel the smallest stall count before
//! such a read is the pipe's latency as ptxas knows it (4 cycles on Hopper and Ampere for
//! the FP32 and integer pipes). The crate's tests use it to check the control field's
//! layout on every stage's kernels.

use crate::listing::{Function, Instruction};
use std::collections::BTreeMap;

/// Arithmetic of fixed latency whose first operand is its only destination register (the
/// `.WIDE` forms, which write a register pair whose low half is ready a cycle early, are not
/// counted).
pub const FIXED_LATENCY: [&str; 9] = [
    "FFMA", "FADD", "FMUL", "FMNMX", "FSEL", "IMAD", "IADD3", "LOP3", "SHF",
];

/// `R12` from `-R12.reuse`, `|R12|`, `R12.H1`: the register an operand names, if it is a
/// general register.
fn register(operand: &str) -> Option<&str> {
    let o = operand.trim_start_matches(['-', '|', '!', '~']);
    let end = o
        .find(|c: char| !(c.is_ascii_alphanumeric()))
        .unwrap_or(o.len());
    let r = &o[..end];
    (r.len() > 1 && r.starts_with('R') && r[1..].chars().all(|c| c.is_ascii_digit())).then_some(r)
}

/// Whether `a` is unguarded fixed-latency arithmetic writing a general register that `b`
/// reads as a source operand.
pub fn next_reads_result(a: &Instruction, b: &Instruction) -> bool {
    if a.guard.is_some() || !FIXED_LATENCY.contains(&a.mnemonic()) || a.opcode.contains(".WIDE") {
        return false;
    }
    let Some(dest) = a.operands.first().and_then(|o| register(o)) else {
        return false;
    };
    // `b`'s sources: every operand but its first, the destination, except for stores and
    // branches, which have none (a store's first operand is its address).
    let skip = usize::from(!matches!(
        b.mnemonic(),
        "STS" | "STG" | "ST" | "STL" | "RED" | "ATOM" | "BRA"
    ));
    b.operands
        .iter()
        .skip(skip)
        .any(|o| !o.contains('[') && register(o) == Some(dest))
        || b.operands
            .iter()
            .any(|o| o.contains('[') && address_registers(o).any(|r| r == dest))
}

/// The general registers of an address operand: `R129` and not `R12` in `[R129+UR6+0x90]`.
fn address_registers(operand: &str) -> impl Iterator<Item = &str> {
    operand
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() > 1 && w.starts_with('R') && w[1..].chars().all(|c| c.is_ascii_digit()))
}

/// For each mnemonic of [`FIXED_LATENCY`], the stall counts ptxas put on it where the next
/// instruction reads its result, and how often each.
pub fn stalls_before_dependent_reads(
    functions: &[Function],
) -> BTreeMap<String, BTreeMap<u8, usize>> {
    let mut out: BTreeMap<String, BTreeMap<u8, usize>> = BTreeMap::new();
    for f in functions {
        for w in f.instructions.windows(2) {
            if next_reads_result(&w[0], &w[1]) {
                *out.entry(w[0].mnemonic().to_string())
                    .or_default()
                    .entry(w[0].control.stall)
                    .or_default() += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::parse_listing;
    use crate::listing::tests::LOOP;

    #[test]
    fn operands_name_their_registers() {
        assert_eq!(register("-R12.reuse"), Some("R12"));
        assert_eq!(register("|R3|"), Some("R3"));
        assert_eq!(register("RZ"), None);
        assert_eq!(register("UR4"), None);
        assert_eq!(register("c[0x0][0x28]"), None);
        assert_eq!(
            address_registers("[R129+UR6+0x9030]").collect::<Vec<_>>(),
            vec!["R129"]
        );
        assert_eq!(
            address_registers("[R2.64+0x10]").collect::<Vec<_>>(),
            vec!["R2"]
        );
    }

    #[test]
    fn a_result_read_by_the_next_instruction_is_found() {
        let f = parse_listing(LOOP).unwrap().remove(0);
        // MUFU (variable latency) then FADD reading it: not counted; FMUL then ISETP: no read.
        let found = stalls_before_dependent_reads(std::slice::from_ref(&f));
        assert!(found.is_empty(), "{found:?}");
        let mut pair = f.instructions[6..8].to_vec();
        pair[1].operands = vec![
            "P2".into(),
            "PT".into(),
            "R6".into(),
            "RZ".into(),
            "PT".into(),
        ];
        assert!(next_reads_result(&pair[0], &pair[1]));
    }
}
