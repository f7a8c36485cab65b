//! `--save DIR`: a run's tensors as .npy files, for inspecting a failure in numpy.

use harness::Problem;
use harness::run::Outputs;
use std::io::BufWriter;
use std::path::Path;

/// Writes q, k, v, o (float32, BSHD) and lse (float32) into `dir`. bf16 and f16 widen to
/// float32 exactly, and numpy has no bf16, so float32 is the honest common format.
pub fn save_npy(dir: &Path, p: &Problem, out: &Outputs) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let q_shape = [p.batch, p.seqlen_q, p.heads, p.head_dim];
    let kv_shape = [p.batch, p.seqlen_k, p.kv_heads, p.head_dim];
    let widen = |bits: &[u16]| -> Vec<f32> { bits.iter().map(|&b| p.dtype.from_bits(b)).collect() };
    write(&dir.join("q.npy"), &q_shape, &widen(&out.inputs.q))?;
    write(&dir.join("k.npy"), &kv_shape, &widen(&out.inputs.k))?;
    write(&dir.join("v.npy"), &kv_shape, &widen(&out.inputs.v))?;
    write(&dir.join("o.npy"), &q_shape, &widen(&out.o))?;
    write(
        &dir.join("lse.npy"),
        &[p.batch, p.heads, p.seqlen_q],
        &out.lse,
    )?;
    Ok(())
}

fn write(path: &Path, shape: &[usize], data: &[f32]) -> std::io::Result<()> {
    use npyz::WriterBuilder;
    let shape: Vec<u64> = shape.iter().map(|&s| s as u64).collect();
    let file = BufWriter::new(std::fs::File::create(path)?);
    let mut writer = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&shape)
        .writer(file)
        .begin_nd()?;
    writer.extend(data.iter().copied())?;
    writer.finish()
}
