//! The schedule ptxas wrote, read back from a kernel's SASS: each instruction's control
//! bits (the cycles its warp waits before the next instruction, the scoreboards it sets
//! and waits on), the kernel's basic blocks and loops, and its main loop cut into phases at
//! each synchronization, with the static cycles of each: the fewest cycles a warp takes to
//! issue it. With a Nsight Compute source page of the same binary, the way the warps took
//! and where their samples fell. `flashlab schedule` prints it; the book's Results page
//! ("The schedule ptxas wrote") reads FlashAttention-4's and stage 16's side by side.

pub mod cfg;
pub mod control;
pub mod dependence;
pub mod listing;
pub mod profile;
pub mod schedule;

pub use control::Control;
pub use listing::{Flow, Function, Instruction, parse_listing};
pub use profile::{Row, SourcePage};
pub use schedule::{LoopSchedule, Phase, StallRow, Way, main_loop, stall_versus_wait};

use std::io::Read;
use std::path::Path;

/// A text file, gunzipped when its name ends in `.gz` (the runs of record keep listings
/// and source pages compressed).
pub fn read_text(path: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut text = String::new();
        flate2::read::GzDecoder::new(&bytes[..]).read_to_string(&mut text)?;
        Ok(text)
    } else {
        String::from_utf8(bytes)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }
}
