//! A `cuobjdump -sass` listing, read into functions of instructions: each instruction's
//! address, guard predicate, opcode, operands and control bits.
//!
//! The listing prints an instruction on two lines, its text with the low 64-bit word of its
//! encoding, then the high word alone:
//!
//! ```text
//!         /*0040*/              @!P3 BRA 0x8b0 ;                 /* 0x000000080018b947 */
//!                                                                /* 0x000fea0003800000 */
//! ```
//!
//! `code for sm_90a` starts an architecture and `Function : name` a kernel.

use crate::control::Control;
use std::fmt;

/// One kernel of a listing, for one architecture.
#[derive(Clone, Debug)]
pub struct Function {
    pub arch: String,
    pub name: String,
    pub instructions: Vec<Instruction>,
}

/// One SASS instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// Its byte offset in the function.
    pub address: u32,
    /// `@P0`, `@!UP1`...: the predicate it runs under, if any.
    pub guard: Option<String>,
    /// The opcode with its modifiers: `HGMMA.64x128x16.F32.BF16`.
    pub opcode: String,
    pub operands: Vec<String>,
    pub control: Control,
}

/// What an instruction does to the flow of control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Goes on to the next instruction.
    Next,
    /// Jumps to `target`; `conditional` when it may also go on to the next instruction.
    Branch { target: u32, conditional: bool },
    /// Ends the thread (`EXIT`), or returns from a subroutine (`RET`); `conditional` when it
    /// may also go on.
    End { conditional: bool },
}

impl Instruction {
    /// The opcode without its modifiers: `HGMMA`.
    pub fn mnemonic(&self) -> &str {
        self.opcode.split('.').next().unwrap_or(&self.opcode)
    }

    /// The instruction as the listing prints it, without its address.
    pub fn text(&self) -> String {
        let mut s = String::new();
        if let Some(g) = &self.guard {
            s.push_str(g);
            s.push(' ');
        }
        s.push_str(&self.opcode);
        if !self.operands.is_empty() {
            s.push(' ');
            s.push_str(&self.operands.join(", "));
        }
        s
    }

    /// Whether the guard lets the instruction run always (`@PT` or none) or never (`@!PT`).
    fn guard_is(&self) -> Option<bool> {
        match self.guard.as_deref() {
            None | Some("@PT") | Some("@UPT") => Some(true),
            Some("@!PT") | Some("@!UPT") => Some(false),
            Some(_) => None,
        }
    }

    /// What it does to the flow of control. `BRA.DIV` (taken only when the warp has
    /// diverged) is conditional even without a guard; a `CALL` returns to the next
    /// instruction, so it is `Next`.
    pub fn flow(&self) -> Flow {
        let always = self.guard_is();
        if always == Some(false) {
            return Flow::Next;
        }
        match self.mnemonic() {
            "BRA" => match self.operands.last().and_then(|o| parse_hex(o)) {
                Some(target) => Flow::Branch {
                    target,
                    conditional: always.is_none() || self.opcode.starts_with("BRA.DIV"),
                },
                None => Flow::End { conditional: true },
            },
            "EXIT" | "RET" => Flow::End {
                conditional: always.is_none(),
            },
            // An indirect jump: where it goes is not in the listing.
            "BRX" | "JMX" => Flow::End { conditional: false },
            _ => Flow::Next,
        }
    }
}

impl fmt::Display for Instruction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/*{:04x}*/ {}", self.address, self.text())
    }
}

fn parse_hex(s: &str) -> Option<u32> {
    u32::from_str_radix(s.trim().strip_prefix("0x")?, 16).ok()
}

fn parse_hex64(s: &str) -> Option<u64> {
    u64::from_str_radix(s.trim().strip_prefix("0x")?, 16).ok()
}

/// Why a listing could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// `/* 0x000fea0003800000 */` alone on a line: the high word of the instruction above.
fn encoding_word(line: &str) -> Option<u64> {
    let inner = line.trim().strip_prefix("/*")?.strip_suffix("*/")?;
    parse_hex64(inner)
}

/// `/*0040*/ @!P3 BRA 0x8b0 ; /* 0x... */`: the address and the text before the `;`.
fn instruction_line(line: &str) -> Option<(u32, &str)> {
    let rest = line.trim().strip_prefix("/*")?;
    let (address, rest) = rest.split_once("*/")?;
    if address.is_empty() || !address.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let address = u32::from_str_radix(address, 16).ok()?;
    let (code, _) = rest.split_once(';')?;
    Some((address, code.trim()))
}

/// Splits `@!P0 BRA.DIV UR8, 0xdd90` into guard, opcode and operands.
fn split_instruction(code: &str) -> (Option<String>, String, Vec<String>) {
    let mut rest = code.trim();
    let mut guard = None;
    if rest.starts_with('@') {
        let (g, r) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        guard = Some(g.to_string());
        rest = r.trim_start();
    }
    let (opcode, operands) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let operands = operands
        .split(',')
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .map(String::from)
        .collect();
    (guard, opcode.to_string(), operands)
}

/// Every function of a `cuobjdump -sass` listing, in listing order.
pub fn parse_listing(text: &str) -> Result<Vec<Function>, ParseError> {
    let mut functions: Vec<Function> = Vec::new();
    let mut arch = String::new();
    // An instruction read, waiting for its high word on the next line.
    let mut pending: Option<(usize, u32, &str)> = None;
    for (n, line) in text.lines().enumerate() {
        let line_no = n + 1;
        if let Some((at, address, code)) = pending.take() {
            let Some(high) = encoding_word(line) else {
                return Err(ParseError {
                    line: at,
                    message: format!(
                        "the instruction at /*{address:04x}*/ has no second encoding word on the next line (a listing for sm_70 or later prints two)"
                    ),
                });
            };
            let (guard, opcode, operands) = split_instruction(code);
            let f = functions.last_mut().expect("pending implies a function");
            f.instructions.push(Instruction {
                address,
                guard,
                opcode,
                operands,
                control: Control::from_high_word(high),
            });
            continue;
        }
        let trimmed = line.trim();
        if let Some(a) = trimmed.strip_prefix("code for ") {
            arch = a.trim().to_string();
        } else if let Some((_, name)) = trimmed.split_once("Function : ") {
            functions.push(Function {
                arch: arch.clone(),
                name: name.trim().to_string(),
                instructions: Vec::new(),
            });
        } else if let Some((address, code)) = instruction_line(trimmed) {
            if functions.is_empty() {
                return Err(ParseError {
                    line: line_no,
                    message: "an instruction before any `Function :` line".into(),
                });
            }
            pending = Some((line_no, address, code));
        }
    }
    if let Some((at, address, _)) = pending {
        return Err(ParseError {
            line: at,
            message: format!("the listing ends before the second word of /*{address:04x}*/"),
        });
    }
    Ok(functions)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A listing in cuobjdump's layout: a loop whose body branches round a rescale, a
    /// mbarrier wait that retries out of line, and an exit.
    pub const LOOP: &str = r#"
	code for sm_90a
		Function : toy_bf16_d128
	.headerflags	@"EF_CUDA_SM90"
        /*0000*/                   MOV R1, c[0x0][0x28] ;                          /* 0x00000a0000017a02 */
                                                                                   /* 0x000fe20000000f00 */
        /*0010*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R2 ;  /* 0x00000002ff0075a7 */
                                                                                   /* 0x000e240008000144 */
        /*0020*/              @!P0 BRA 0xa0 ;                                      /* 0x0000000000188947 */
                                                                                   /* 0x001fea0003800000 */
        /*0030*/                   MUFU.EX2 R4, R4 ;                               /* 0x0000000400047308 */
                                                                                   /* 0x000e620000000800 */
        /*0040*/                   FADD R5, R4, R5 ;                               /* 0x0000000504057221 */
                                                                                   /* 0x002fce0000000000 */
        /*0050*/               @P1 BRA 0x70 ;                                      /* 0x0000000000041947 */
                                                                                   /* 0x000fea0003800000 */
        /*0060*/                   FMUL R6, R6, R7 ;                               /* 0x0000000706067220 */
                                                                                   /* 0x000fe20000400000 */
        /*0070*/                   ISETP.NE.AND P2, PT, R8, RZ, PT ;               /* 0x000000ff0800720c */
                                                                                   /* 0x000fda0003f45270 */
        /*0080*/               @P2 BRA 0x10 ;                                      /* 0x0000000000e02947 */
                                                                                   /* 0x000fea000383ffff */
        /*0090*/                   EXIT ;                                          /* 0x000000000000794d */
                                                                                   /* 0x000fea0003800000 */
        /*00a0*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R2 ;  /* 0x00000002ff0075a7 */
                                                                                   /* 0x000e240008000144 */
        /*00b0*/              @!P0 BRA 0xa0 ;                                      /* 0x0000000000f88947 */
                                                                                   /* 0x001fea000383ffff */
        /*00c0*/                   BRA 0x30 ;                                      /* 0x0000000000d87947 */
                                                                                   /* 0x000fea000383ffff */
		..........
"#;

    #[test]
    fn a_listing_reads_into_functions_of_instructions() {
        let functions = parse_listing(LOOP).unwrap();
        assert_eq!(functions.len(), 1);
        let f = &functions[0];
        assert_eq!(
            (f.arch.as_str(), f.name.as_str()),
            ("sm_90a", "toy_bf16_d128")
        );
        assert_eq!(f.instructions.len(), 13);
        let bra = &f.instructions[2];
        assert_eq!(bra.address, 0x20);
        assert_eq!(bra.guard.as_deref(), Some("@!P0"));
        assert_eq!(bra.mnemonic(), "BRA");
        assert_eq!(
            bra.flow(),
            Flow::Branch {
                target: 0xa0,
                conditional: true
            }
        );
        // The branch waits on scoreboard 0, which the try_wait before it set.
        assert_eq!(f.instructions[1].control.write_barrier, Some(0));
        assert_eq!(bra.control.waits_on().collect::<Vec<_>>(), vec![0]);
        assert_eq!(f.instructions[7].text(), "ISETP.NE.AND P2, PT, R8, RZ, PT");
        assert_eq!(f.instructions[7].control.stall, 13);
        assert_eq!(f.instructions[9].flow(), Flow::End { conditional: false });
        assert_eq!(
            f.instructions[12].flow(),
            Flow::Branch {
                target: 0x30,
                conditional: false
            }
        );
    }

    #[test]
    fn a_listing_cut_between_the_two_words_is_an_error() {
        let cut = "code for sm_90a\nFunction : k\n/*0000*/ EXIT ; /* 0x000000000000794d */\n";
        let e = parse_listing(cut).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("ends before"), "{e}");
        let one_word =
            "code for sm_90a\nFunction : k\n/*0000*/ EXIT ; /* 0x0 */\n/*0010*/ EXIT ; /* 0x0 */\n";
        assert!(
            parse_listing(one_word)
                .unwrap_err()
                .message
                .contains("second encoding word")
        );
    }

    /// An instruction from its text alone, its control field zero.
    fn instruction(text: &str) -> Instruction {
        let (guard, opcode, operands) = split_instruction(text);
        Instruction {
            address: 0,
            guard,
            opcode,
            operands,
            control: Control::from_high_word(0),
        }
    }

    #[test]
    fn divergent_branches_and_never_taken_guards() {
        assert_eq!(
            instruction("BRA.DIV UR8, 0xdd90").flow(),
            Flow::Branch {
                target: 0xdd90,
                conditional: true
            }
        );
        assert_eq!(instruction("@!PT BRA 0x40").flow(), Flow::Next);
        assert_eq!(
            instruction("@PT BRA 0x40").flow(),
            Flow::Branch {
                target: 0x40,
                conditional: false
            }
        );
        assert_eq!(
            instruction("@P0 EXIT").flow(),
            Flow::End { conditional: true }
        );
    }
}
