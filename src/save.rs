//! `--save DIR`: a run's tensors as .npy files, with a README.md that says what each one
//! holds and how to replay the run in numpy, for inspecting a failure there.

use anyhow::{Context as _, Result};
use harness::backward::run::{BackwardOutputs, BackwardReport};
use harness::decode::run::{DecodeOutputs, DecodeReport};
use harness::run::{Outputs, RunReport};
use harness::{DType, KvLayout};
use std::io::BufWriter;
use std::path::Path;

/// Writes q, k, v, o (float32, BSHD) and lse (float32) into `dir`, and the README. bf16 and
/// f16 widen to float32 exactly, and numpy has no bf16, so float32 is the honest common
/// format.
pub fn save_prefill(dir: &Path, report: &RunReport, out: &Outputs) -> Result<()> {
    let p = &report.problem;
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
    let widen = |bits: &[u16]| widen(p.dtype, bits);
    write(&dir.join("q.npy"), &q_shape, &widen(&out.inputs.q))?;
    write(&dir.join("k.npy"), &kv_shape, &widen(&out.inputs.k))?;
    write(&dir.join("v.npy"), &kv_shape, &widen(&out.inputs.v))?;
    write(&dir.join("o.npy"), &q_shape, &widen(&out.o))?;
    write(
        &dir.join("lse.npy"),
        &[p.shape.batch, p.shape.heads, p.shape.seqlen_q],
        &out.lse,
    )?;
    let readme = format!(
        "# flashlab stage {} ({}), prefill\n\n\
         {p}, seed {}.\n\n\
         Every array is float32 (bf16 and f16 widen to it exactly):\n\n\
         - `q.npy`, `o.npy`: `[batch, seqlen_q, heads, head_dim]` = {q_shape:?}\n\
         - `k.npy`, `v.npy`: `[batch, seqlen_k, kv_heads, head_dim]` = {kv_shape:?}\n\
         - `lse.npy`: `[batch, heads, seqlen_q]`, natural log\n\n\
         Query head h reads K/V head `h // {group}`; the softmax scale is {scale:?}{causal}.\n",
        report.stage,
        report.slug,
        report.seed,
        group = p.shape.heads / p.shape.kv_heads,
        scale = p.softmax_scale(),
        causal = if p.causal {
            ", and query i sees key j when `j <= i + seqlen_k - seqlen_q` (causal, bottom-right)"
        } else {
            ""
        },
    );
    write_text(&dir.join("README.md"), &readme)
}

/// Writes a backward run's tensors into `dir`: q, k, v, the forward's o and lse, d_o, and
/// the gradients dq (Q's layout), dk and dv (K's), all float32, and the README.
pub fn save_backward(dir: &Path, report: &BackwardReport, out: &BackwardOutputs) -> Result<()> {
    let p = &report.problem;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let s = &p.shape;
    let q_shape = [s.batch, s.seqlen_q, s.heads, s.head_dim];
    let kv_shape = [s.batch, s.seqlen_k, s.kv_heads, s.head_dim];
    let widen = |bits: &[u16]| widen(p.dtype, bits);
    for (name, shape, bits) in [
        ("q", q_shape, &out.inputs.q),
        ("k", kv_shape, &out.inputs.k),
        ("v", kv_shape, &out.inputs.v),
        ("o", q_shape, &out.o),
        ("d_o", q_shape, &out.d_o),
        ("dq", q_shape, &out.dq),
        ("dk", kv_shape, &out.dk),
        ("dv", kv_shape, &out.dv),
    ] {
        write(&dir.join(format!("{name}.npy")), &shape, &widen(bits))?;
    }
    write(
        &dir.join("lse.npy"),
        &[s.batch, s.heads, s.seqlen_q],
        &out.lse,
    )?;
    let readme = format!(
        "# flashlab stage {} ({}), backward\n\n\
         {p}, seed {}; O and the LSE from stage {}'s forward.\n\n\
         Every array is float32 (bf16 and f16 widen to it exactly):\n\n\
         - `q.npy`, `o.npy`, `d_o.npy`, `dq.npy`: `[batch, seqlen_q, heads, head_dim]` = {q_shape:?}\n\
         - `k.npy`, `v.npy`, `dk.npy`, `dv.npy`: `[batch, seqlen_k, kv_heads, head_dim]` = {kv_shape:?}\n\
         - `lse.npy`: `[batch, heads, seqlen_q]`, natural log\n\n\
         The gradients are those of the loss `sum(O * dO)`. Query head h reads K/V head `h // {group}`, \
         so dk and dv sum over the {group} query heads of each group; the softmax scale is {scale:?}{causal}.\n",
        report.stage,
        report.slug,
        report.seed,
        report.forward_stage,
        group = s.heads / s.kv_heads,
        scale = p.softmax_scale(),
        causal = if p.causal {
            ", and query i sees key j when `j <= i + seqlen_k - seqlen_q` (causal, bottom-right)"
        } else {
            ""
        },
    );
    write_text(&dir.join("README.md"), &readme)
}

/// Writes a decode run's inputs as the kernel saw them and its outputs into `dir`: q, the
/// cache (k, v) in its own layout, NaN in every slot no sequence owns, the lengths, the
/// block table of a paged cache, o and lse; the problem as JSON, and the README with a
/// numpy replay of one sequence. Returns the names of the .npy files, in the order written.
pub fn save_decode(
    dir: &Path,
    report: &DecodeReport,
    out: &DecodeOutputs,
) -> Result<Vec<&'static str>> {
    let p = &report.problem;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let q_shape = [p.batch, p.seqlen_q, p.heads, p.head_dim];
    // What the kernel indexes: a contiguous cache by (sequence, key); a paged one by
    // (page, row), through the block table.
    let cache_shape = match p.layout {
        KvLayout::Contiguous => [p.batch, p.capacity(), p.kv_heads, p.head_dim],
        KvLayout::Paged { page_size } => [out.inputs.pages, page_size, p.kv_heads, p.head_dim],
    };
    let widen = |bits: &[u16]| widen(p.dtype, bits);
    let lengths: Vec<i32> = p.seqlens_k.iter().map(|&n| n as i32).collect();
    let mut written = vec!["q", "k", "v", "seqlens_k"];
    write(&dir.join("q.npy"), &q_shape, &widen(&out.inputs.q))?;
    write(&dir.join("k.npy"), &cache_shape, &widen(&out.inputs.k))?;
    write(&dir.join("v.npy"), &cache_shape, &widen(&out.inputs.v))?;
    write(&dir.join("seqlens_k.npy"), &[p.batch], &lengths)?;
    if let KvLayout::Paged { .. } = p.layout {
        write(
            &dir.join("block_table.npy"),
            &[p.batch, p.pages_per_seq()],
            &out.inputs.block_table,
        )?;
        written.push("block_table");
    }
    write(&dir.join("o.npy"), &q_shape, &widen(&out.o))?;
    write(
        &dir.join("lse.npy"),
        &[p.batch, p.heads, p.seqlen_q],
        &out.lse,
    )?;
    written.extend(["o", "lse"]);
    let json = serde_json::json!({
        "stage": report.stage,
        "problem": p,
        "softmax_scale": p.softmax_scale(),
        "splits": report.splits,
        "seed": report.seed,
    });
    write_text(
        &dir.join("problem.json"),
        &serde_json::to_string_pretty(&json)?,
    )?;
    write_text(&dir.join("README.md"), &decode_readme(report, cache_shape))?;
    Ok(written)
}

/// The decode README: what each file holds, and a numpy replay of sequence 0 that gathers
/// its keys as the kernel does.
fn decode_readme(report: &DecodeReport, cache_shape: [usize; 4]) -> String {
    let p = &report.problem;
    let (cache, table, gather) = match p.layout {
        KvLayout::Contiguous => (
            format!(
                "`[batch, capacity, kv_heads, head_dim]` = {cache_shape:?}: sequence b's keys \
                 are its first `seqlens_k[b]` rows"
            ),
            String::new(),
            "kb, vb = k[b, :n], v[b, :n]".to_string(),
        ),
        KvLayout::Paged { page_size } => (
            format!(
                "`[pages, page_size, kv_heads, head_dim]` = {cache_shape:?}: the page pool, \
                 handed out in the shuffled order of the block table"
            ),
            format!(
                "- `block_table.npy` (int32): `[batch, pages_per_seq]` = {:?}: key j of sequence b \
                 is row `j % {page_size}` of page `block_table[b, j // {page_size}]`; entries past \
                 a sequence's pages point at a spare page\n",
                [p.batch, p.pages_per_seq()]
            ),
            format!(
                "table = np.load(f\"{{d}}/block_table.npy\")\n\
                 pages, rows = table[b, j // {page_size}], j % {page_size}\n\
                 kb, vb = k[pages, rows], v[pages, rows]"
            ),
        ),
    };
    let causal = if p.causal {
        "\n# causal, bottom-right: query i sees key j when j <= i + n - seqlen_q\n\
         i = np.arange(sq)[:, None]\n\
         s = np.where(j[None, None, :] <= i[None] + n - sq, s, -np.inf)"
    } else {
        ""
    };
    format!(
        "# flashlab stage {stage} ({slug}), decode\n\n\
         {p}, seed {seed}, {splits} splits.\n\n\
         Arrays are float32 (bf16 and f16 widen to it exactly) unless said:\n\n\
         - `q.npy`, `o.npy`: `[batch, seqlen_q, heads, head_dim]` = {q_shape:?}: the new query rows, and what the kernel wrote\n\
         - `k.npy`, `v.npy`: {cache}; every slot no sequence owns holds NaN, as the kernel saw it\n\
         - `seqlens_k.npy` (int32): `[batch]`, keys per sequence\n\
         {table}\
         - `lse.npy`: `[batch, heads, seqlen_q]`, natural log\n\
         - `problem.json`: the problem, the softmax scale, the split count and the seed\n\n\
         Replay sequence `b` (query head h reads K/V head `h // {group}`):\n\n\
         ```python\n\
         import numpy as np\n\
         d = \".\"  # this folder\n\
         q, k, v, o, lse = (np.load(f\"{{d}}/{{n}}.npy\").astype(np.float64) for n in [\"q\", \"k\", \"v\", \"o\", \"lse\"])\n\
         lens = np.load(f\"{{d}}/seqlens_k.npy\")\n\
         b, sq, scale = 0, {sq}, {scale:?}\n\
         n = lens[b]\n\
         j = np.arange(n)\n\
         {gather}\n\
         kb, vb = np.repeat(kb, {group}, axis=1), np.repeat(vb, {group}, axis=1)\n\
         s = np.einsum(\"qhd,khd->hqk\", q[b], kb) * scale{causal}\n\
         m = s.max(-1, keepdims=True)\n\
         e = np.exp(s - m)\n\
         ref_o = np.einsum(\"hqk,khd->qhd\", e / e.sum(-1, keepdims=True), vb)\n\
         ref_lse = (m + np.log(e.sum(-1, keepdims=True)))[..., 0]\n\
         print(np.abs(ref_o - o[b]).max(), np.abs(ref_lse - lse[b]).max())\n\
         ```\n",
        stage = report.stage,
        slug = report.slug,
        seed = report.seed,
        splits = report.splits,
        q_shape = [p.batch, p.seqlen_q, p.heads, p.head_dim],
        group = p.group(),
        sq = p.seqlen_q,
        scale = p.softmax_scale(),
    )
}

fn widen(dtype: DType, bits: &[u16]) -> Vec<f32> {
    bits.iter().map(|&b| dtype.from_bits(b)).collect()
}

/// Writes one array; an error names the file.
fn write<T: npyz::AutoSerialize + Copy>(path: &Path, shape: &[usize], data: &[T]) -> Result<()> {
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

fn write_text(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::Problem;
    use harness::decode::cache::DecodeInputs;
    use harness::decode::{DecodeProblem, DecodeTiles, SplitRule};
    use harness::inputs::HostInputs;

    /// A fresh folder under the system's temporary one, named after the test.
    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("flashlab-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn prefill_report(p: Problem, seed: u64) -> RunReport {
        RunReport {
            stage: 2,
            slug: "online-softmax",
            problem: p,
            seed,
            check: None,
            timing: None,
            tflops: None,
            prepare: None,
        }
    }

    /// A decode run's report as the run would make it, with the numbers the save reads.
    fn decode_report(p: &DecodeProblem, seed: u64, splits: usize) -> DecodeReport {
        let tiles = DecodeTiles {
            rows: 16,
            block_kv: 64,
            warps: 4,
            wide_col_split: 2,
            kv_slots: 3,
        };
        DecodeReport {
            stage: 14,
            slug: "flash-decode",
            problem: p.clone(),
            splits,
            splits_from: "given",
            split_rule: SplitRule::FlashAttention,
            tiles,
            blocks_per_split: tiles.blocks_per_split(p),
            kv_tile_bytes: tiles.kv_tile_bytes(p.head_dim),
            blocks_per_sm: 2,
            slots: 264,
            wave_efficiency: 1.0,
            seed,
            check: None,
            sequences_checked: 0,
            timing: None,
            gb_per_s: None,
            cold_l2: true,
            read_floor: None,
        }
    }

    /// A decode run's outputs from host data: the inputs as a run builds them, and an O and
    /// LSE of distinct values, so a transposed or shifted write shows.
    fn decode_outputs(p: &DecodeProblem, seed: u64) -> DecodeOutputs {
        let inputs = DecodeInputs::generate(p, seed);
        let o = inputs.q.iter().rev().copied().collect();
        let lse = (0..p.lse_len()).map(|i| i as f32 * 0.25 - 3.0).collect();
        DecodeOutputs { inputs, o, lse }
    }

    /// One saved array: its shape and its elements.
    fn load<T: npyz::Deserialize>(dir: &Path, name: &str) -> (Vec<usize>, Vec<T>) {
        let file = std::fs::File::open(dir.join(format!("{name}.npy"))).unwrap();
        let npy = npyz::NpyFile::new(std::io::BufReader::new(file)).unwrap();
        let shape = npy.shape().iter().map(|&s| s as usize).collect();
        (shape, npy.into_vec().unwrap())
    }

    /// Bit patterns, so NaN compares equal to the same NaN.
    fn bits(x: &[f32]) -> Vec<u32> {
        x.iter().map(|v| v.to_bits()).collect()
    }

    /// A paged, causal, speculative run reads back as the kernel saw it: every array its
    /// shape and values (the pool's NaN slots too), and sequence b's keys gathered through
    /// the saved block table as the README says are the keys the oracle checked it with.
    #[test]
    fn a_paged_decode_save_reads_back_as_the_kernel_saw_it() {
        let dir = temp_dir("save-decode-paged");
        let p = DecodeProblem {
            seqlens_k: vec![17, 40, 5],
            causal: true,
            layout: KvLayout::Paged { page_size: 16 },
            ..DecodeProblem::uniform(3, 4, 2, 2, 1, 8)
        };
        let out = decode_outputs(&p, 7);
        let written = save_decode(&dir, &decode_report(&p, 7, 3), &out).unwrap();
        assert_eq!(
            written,
            ["q", "k", "v", "seqlens_k", "block_table", "o", "lse"]
        );
        let widened = |b: &[u16]| bits(&widen(p.dtype, b));

        let (shape, q) = load::<f32>(&dir, "q");
        assert_eq!(
            (shape, bits(&q)),
            (vec![3, 2, 4, 8], widened(&out.inputs.q))
        );
        let pages = out.inputs.pages;
        let (k_shape, k) = load::<f32>(&dir, "k");
        let (v_shape, v) = load::<f32>(&dir, "v");
        assert_eq!(k_shape, [pages, 16, 2, 8]);
        assert_eq!(v_shape, k_shape);
        assert_eq!(bits(&k), widened(&out.inputs.k));
        assert_eq!(bits(&v), widened(&out.inputs.v));
        assert!(k.iter().any(|x| x.is_nan()), "the unowned slots stay NaN");
        let (shape, lens) = load::<i32>(&dir, "seqlens_k");
        assert_eq!((shape, lens.clone()), (vec![3], vec![17, 40, 5]));
        let (shape, table) = load::<i32>(&dir, "block_table");
        assert_eq!(shape, [3, p.pages_per_seq()]);
        assert_eq!(table, out.inputs.block_table);
        let (shape, o) = load::<f32>(&dir, "o");
        assert_eq!((shape, bits(&o)), (vec![3, 2, 4, 8], widened(&out.o)));
        let (shape, lse) = load::<f32>(&dir, "lse");
        assert_eq!((shape, bits(&lse)), (vec![3, 4, 2], bits(&out.lse)));

        // The README's gather: key j of sequence b is row j % 16 of page table[b, j // 16].
        let row = 2 * 8;
        let mut qkv = [Vec::new(), Vec::new(), Vec::new()];
        for b in 0..p.batch {
            out.inputs.sequence_f64(&p, b, &mut qkv);
            let gathered: Vec<f64> = (0..lens[b] as usize)
                .flat_map(|j| {
                    let page = table[b * p.pages_per_seq() + j / 16] as usize;
                    let r = page * 16 + j % 16;
                    k[r * row..(r + 1) * row].iter().map(|&x| x as f64)
                })
                .collect();
            assert_eq!(gathered, qkv[1], "sequence {b}'s keys");
        }
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        for expected in [
            "pages, rows = table[b, j // 16], j % 16",
            "kb, vb = k[pages, rows], v[pages, rows]",
            "np.repeat(kb, 2, axis=1)",
            "j <= i + n - seqlen_q",
            "seed 7, 3 splits",
        ] {
            assert!(
                readme.contains(expected),
                "README lacks `{expected}`:\n{readme}"
            );
        }
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("problem.json")).unwrap())
                .unwrap();
        assert_eq!(json["seed"], 7);
        assert_eq!(json["splits"], 3);
        assert_eq!(json["problem"]["layout"]["page_size"], 16);
        assert_eq!(json["softmax_scale"], f64::from(p.softmax_scale()));
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A contiguous cache is saved `[batch, capacity, kv_heads, head_dim]`, rows past a
    /// sequence's length NaN, and with no block table.
    #[test]
    fn a_contiguous_decode_save_has_no_block_table() {
        let dir = temp_dir("save-decode-contiguous");
        let p = DecodeProblem {
            seqlens_k: vec![3, 9],
            ..DecodeProblem::uniform(2, 2, 1, 1, 1, 8)
        };
        let out = decode_outputs(&p, 3);
        let written = save_decode(&dir, &decode_report(&p, 3, 1), &out).unwrap();
        assert_eq!(written, ["q", "k", "v", "seqlens_k", "o", "lse"]);
        assert!(!dir.join("block_table.npy").exists());
        let (shape, k) = load::<f32>(&dir, "k");
        assert_eq!(shape, [2, 9, 1, 8]);
        // Sequence 0's rows 3 to 8 are past its length; sequence 1's are all its own.
        let nan_row = |r: usize| k[r * 8..(r + 1) * 8].iter().all(|x| x.is_nan());
        assert_eq!(
            (0..18).filter(|&r| nan_row(r)).collect::<Vec<_>>(),
            (3..9).collect::<Vec<_>>()
        );
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        assert!(readme.contains("kb, vb = k[b, :n], v[b, :n]"), "{readme}");
        assert!(!readme.contains("block_table"), "{readme}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A prefill save reads back with BSHD shapes, and its README names what a replay
    /// needs besides the arrays: the GQA grouping, the scale and the mask.
    #[test]
    fn a_prefill_save_reads_back_with_its_replay_facts() {
        let dir = temp_dir("save-prefill");
        let p = Problem {
            causal: true,
            shape: reference::Shape {
                kv_heads: 1,
                seqlen_k: 5,
                ..Problem::new(1, 2, 3, 8).shape
            },
            ..Problem::new(1, 2, 3, 8)
        };
        let inputs = HostInputs::generate(&p, 4);
        let out = Outputs {
            o: inputs.q.clone(),
            lse: vec![1.5; p.shape.lse_len()],
            inputs,
            timeline: None,
        };
        save_prefill(&dir, &prefill_report(p, 4), &out).unwrap();
        let (shape, k) = load::<f32>(&dir, "k");
        assert_eq!(shape, [1, 5, 1, 8]);
        assert_eq!(bits(&k), bits(&widen(p.dtype, &out.inputs.k)));
        let (shape, lse) = load::<f32>(&dir, "lse");
        assert_eq!((shape, lse), (vec![1, 2, 3], vec![1.5; 6]));
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        for expected in [
            "seed 4",
            "K/V head `h // 2`",
            &format!("softmax scale is {:?}", p.softmax_scale()),
            "j <= i + seqlen_k - seqlen_q",
        ] {
            assert!(
                readme.contains(expected),
                "README lacks `{expected}`:\n{readme}"
            );
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_failed_write_names_the_file_and_the_cause() {
        let dir = temp_dir("save");
        // A directory where o.npy should go: creating the file fails.
        std::fs::create_dir_all(dir.join("o.npy")).unwrap();
        let p = Problem::new(1, 1, 2, 4);
        let out = Outputs {
            inputs: HostInputs::generate(&p, 1),
            o: vec![0; p.shape.q_len()],
            lse: vec![0.0; p.shape.lse_len()],
            timeline: None,
        };
        let err = save_prefill(&dir, &prefill_report(p, 1), &out).unwrap_err();
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
