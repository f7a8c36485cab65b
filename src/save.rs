//! `--save DIR`: a run's tensors as .npy files, for inspecting a failure in numpy.

use anyhow::{Context as _, Result};
use harness::Problem;
use harness::run::Outputs;
use std::io::BufWriter;
use std::path::Path;

/// Writes q, k, v, o (float32, BSHD) and lse (float32) into `dir`. bf16 and f16 widen to
/// float32 exactly, and numpy has no bf16, so float32 is the honest common format.
pub fn save_npy(dir: &Path, p: &Problem, out: &Outputs) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let q_shape = [
        p.shape.batch,
        p.shape.seqlen_q,
        p.shape.heads,
        p.shape.head_dim,
    ];
    let kv_shape = [
        p.shape.batch,
        p.shape.seqlen_k,
        p.shape.kv_heads,
        p.shape.head_dim,
    ];
    let widen = |bits: &[u16]| -> Vec<f32> { bits.iter().map(|&b| p.dtype.from_bits(b)).collect() };
    write(&dir.join("q.npy"), &q_shape, &widen(&out.inputs.q))?;
    write(&dir.join("k.npy"), &kv_shape, &widen(&out.inputs.k))?;
    write(&dir.join("v.npy"), &kv_shape, &widen(&out.inputs.v))?;
    write(&dir.join("o.npy"), &q_shape, &widen(&out.o))?;
    write(
        &dir.join("lse.npy"),
        &[p.shape.batch, p.shape.heads, p.shape.seqlen_q],
        &out.lse,
    )?;
    Ok(())
}

/// Writes one array; an error names the file.
fn write(path: &Path, shape: &[usize], data: &[f32]) -> Result<()> {
    use npyz::WriterBuilder;
    let shape: Vec<u64> = shape.iter().map(|&s| s as u64).collect();
    let write = || -> std::io::Result<()> {
        let file = BufWriter::new(std::fs::File::create(path)?);
        let mut writer = npyz::WriteOptions::new()
            .default_dtype()
            .shape(&shape)
            .writer(file)
            .begin_nd()?;
        writer.extend(data.iter().copied())?;
        writer.finish()
    };
    write().with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::inputs::HostInputs;

    #[test]
    fn a_failed_write_names_the_file_and_the_cause() {
        let dir = std::env::temp_dir().join(format!("flashlab-save-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // A directory where o.npy should go: creating the file fails.
        std::fs::create_dir_all(dir.join("o.npy")).unwrap();
        let p = Problem::new(1, 1, 2, 4);
        let out = Outputs {
            inputs: HostInputs::generate(&p, 1),
            o: vec![0; p.shape.q_len()],
            lse: vec![0.0; p.shape.lse_len()],
            timeline: None,
        };
        let err = save_npy(&dir, &p, &out).unwrap_err();
        let o_path = dir.join("o.npy");
        assert_eq!(err.to_string(), format!("writing {}", o_path.display()));
        let io = err.root_cause().downcast_ref::<std::io::Error>();
        assert_eq!(
            io.map(std::io::Error::kind),
            Some(std::io::ErrorKind::IsADirectory),
            "{err:#}"
        );
        assert!(
            dir.join("q.npy").exists(),
            "the files before o.npy are written"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
