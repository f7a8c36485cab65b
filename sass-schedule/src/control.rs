//! The control bits ptxas writes into every instruction from Volta on: how long the warp
//! waits before its next instruction, and the scoreboards that order it against
//! instructions of variable latency.
//!
//! An instruction is 128 bits; `cuobjdump -sass` prints them as two 64-bit words, and the
//! top 23 bits of the second are the control field. NVIDIA does not document it. Its layout
//! is the one Jia, Maggioni, Staiger and Scarpazza measured on Volta ("Dissecting the NVIDIA
//! Volta GPU Architecture via Microbenchmarking", 2018, section 2.1), which Turing, Ampere
//! and Hopper keep; this crate's tests hold it to the listings of every stage (a scoreboard
//! waited on was set before it) and to Nsight Compute's samples (the stall count of an
//! instruction predicts the `wait` samples of the next: book, Results, "The schedule ptxas
//! wrote").

/// The control field of one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Control {
    /// Cycles before this warp may issue its next instruction, 0 to 15: ptxas's fixed
    /// latencies (a result read by the next instruction) and the pacing of a pipe that
    /// accepts a warp's instruction only every few cycles. Nsight Compute counts a warp held
    /// by it as stalled on `wait`.
    pub stall: u8,
    /// The yield flag (bit 4): whether the scheduler may switch to another warp after it.
    pub yield_flag: bool,
    /// The scoreboard (0 to 5) this instruction releases once its result is written, for
    /// instructions whose latency is not fixed (memory, shuffles, special functions).
    pub write_barrier: Option<u8>,
    /// The scoreboard released once its source registers have been read.
    pub read_barrier: Option<u8>,
    /// The scoreboards (bit b is scoreboard b) that must be released before it issues.
    pub wait_mask: u8,
    /// The operand-reuse flags, one per source slot.
    pub reuse: u8,
}

/// The first bit of the control field in the instruction's second (high) 64-bit word.
const FIELD_SHIFT: u32 = 41;
/// Scoreboard index 7 means "none".
const NO_BARRIER: u64 = 7;

impl Control {
    /// The control field of an instruction whose high 64-bit word is `high`.
    pub fn from_high_word(high: u64) -> Self {
        let field = high >> FIELD_SHIFT;
        let barrier = |b: u64| (b != NO_BARRIER).then_some(b as u8);
        Self {
            stall: (field & 0xf) as u8,
            yield_flag: (field >> 4) & 1 == 1,
            write_barrier: barrier((field >> 5) & 7),
            read_barrier: barrier((field >> 8) & 7),
            wait_mask: ((field >> 11) & 0x3f) as u8,
            reuse: ((field >> 17) & 0xf) as u8,
        }
    }

    /// The scoreboards this instruction waits on, in order.
    pub fn waits_on(&self) -> impl Iterator<Item = u8> + '_ {
        (0..6).filter(|b| self.wait_mask >> b & 1 == 1)
    }

    /// The field as `cuobjdump`-style readers print it: `S07 Y W1 R- B--2---`: stall, yield,
    /// write and read scoreboard, and the scoreboards waited on.
    pub fn describe(&self) -> String {
        let sb = |b: Option<u8>| b.map_or("-".to_string(), |b| b.to_string());
        let waits: String = (0..6)
            .map(|b| {
                if self.wait_mask >> b & 1 == 1 {
                    char::from(b'0' + b)
                } else {
                    '-'
                }
            })
            .collect();
        format!(
            "S{:02} {} W{} R{} B{waits}",
            self.stall,
            if self.yield_flag { 'Y' } else { '-' },
            sb(self.write_barrier),
            sb(self.read_barrier)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Words from stage 19's sm_90a listing (`just sass 19`), decoded by hand.
    #[test]
    fn an_instruction_with_no_scoreboard_waits_its_stall_count() {
        // ISETP.NE.AND P3, PT, RZ, UR4, PT ;  /* 0x000fda000bf65270 */: its predicate is read
        // by the next instruction, a branch, 13 cycles later.
        let c = Control::from_high_word(0x000f_da00_0bf6_5270);
        assert_eq!(c.stall, 13);
        assert!(!c.yield_flag);
        assert_eq!(
            (c.write_barrier, c.read_barrier, c.wait_mask, c.reuse),
            (None, None, 0, 0)
        );
    }

    #[test]
    fn a_variable_latency_instruction_sets_a_scoreboard() {
        // S2UR UR14, SR_CTAID.X ;  /* 0x000e620000002500 */: the special register arrives
        // after a latency ptxas cannot know, so the read of UR14 waits on scoreboard 1.
        let c = Control::from_high_word(0x000e_6200_0000_2500);
        assert_eq!(c.stall, 1);
        assert!(c.yield_flag);
        assert_eq!(c.write_barrier, Some(1));
        assert_eq!(c.read_barrier, None);
        assert_eq!(c.describe(), "S01 Y W1 R- B------");
    }

    #[test]
    fn the_wait_mask_and_reuse_flags_are_their_own_bits() {
        // A field with scoreboards 0 and 2 waited on, read scoreboard 3, reuse of slot 0.
        let field: u64 = 2 | (7 << 5) | (3 << 8) | (0b101 << 11) | (1 << 17);
        let c = Control::from_high_word(field << FIELD_SHIFT);
        assert_eq!(c.stall, 2);
        assert_eq!((c.write_barrier, c.read_barrier), (None, Some(3)));
        assert_eq!(c.waits_on().collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(c.reuse, 1);
        assert_eq!(c.describe(), "S02 - W- R3 B0-2---");
    }
}
