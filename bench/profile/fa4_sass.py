"""FlashAttention-4's Hopper forward compiled for sm_90a where there is no GPU (and no torch),
as its interface compiles it for bf16, and its SASS listing written for `flashlab schedule`.

Usage: python3 fa4_sass.py HEAD_DIM [causal] [--lse] > fa4-dHEAD_DIM.sass
       (needs cuobjdump: $CUOBJDUMP, or on PATH; `just cuda` installs one)

The CuTe DSL compiles in-process, with its own NVVM and ptxas (CUDA 13.4 in nvidia-cutlass-dsl
4.8.1), so the kernel it builds here is the one that runs on the GPU machine: the listing of
head dim 128 is, instruction for instruction, the SASS Nsight Compute recorded there
(`bench/records/h200-prefill/hopper/profile/fa4-sass.csv.gz`; `flashlab schedule --profile`
checks it). Without `--lse` the kernel writes no LSE, as `flash_attn_func` on tensors that
need no gradient (how bench/baselines.py and fa4_once.py call it).

Install (a virtual environment with the pins of scripts/fa4-wheels.sh, and what the
interface would take from the GPU machine's PyTorch install):
  python3 -m venv /tmp/fa4venv && . /tmp/fa4venv/bin/activate
  pip install --no-deps flash-attn-4==4.0.0b36 nvidia-cutlass-dsl==4.8.1 \\
      nvidia-cutlass-dsl-libs-base==4.8.1 nvidia-cutlass-dsl-libs-core==4.8.1 \\
      nvidia-cutlass-dsl-libs-cu13==4.8.1 quack-kernels==0.6.5 apache-tvm-ffi==0.1.15.post2
  pip install numpy einops cuda-bindings typing-extensions
The packages' own `__init__` import the torch interface, so this script imports the kernel's
modules past them, with torch replaced by a stub: only the DSL's compiler runs.
"""
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import types
from unittest.mock import MagicMock


def import_past_torch():
    def package_without_init(name):
        root = importlib.util.find_spec(name.split(".")[0]).submodule_search_locations[0]
        pkg = types.ModuleType(name)
        pkg.__path__ = [os.path.join(root, *name.split(".")[1:])]
        sys.modules[name] = pkg

    class Stub(types.ModuleType):
        def __getattr__(self, attr):
            if attr.startswith("__"):
                raise AttributeError(attr)
            value = MagicMock(name=f"{self.__name__}.{attr}")
            setattr(self, attr, value)
            return value

    for name in ["torch", "torch._subclasses", "torch._subclasses.fake_tensor", "torch.library",
                 "torch.utils", "torch.utils._pytree", "torch_c_dlpack_ext", "torch.distributed",
                 "torch.cuda", "torch.nn", "torch.nn.functional"]:
        sys.modules[name] = Stub(name)
    torch = sys.modules["torch"]
    # tvm_ffi checks isinstance(x, torch.Tensor): real classes where one is needed.
    torch.Tensor, torch.dtype, torch.device = (type(n, (), {}) for n in ("Tensor", "dtype", "device"))
    sys.modules["torch._subclasses.fake_tensor"].FakeTensor = type("FakeTensor", (torch.Tensor,), {})
    package_without_init("flash_attn.cute")
    package_without_init("quack")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args or args[0] not in ("64", "128", "256"):
        sys.exit(__doc__)
    d = int(args[0])
    causal = len(args) > 1 and args[1] == "causal"
    with_lse = "--lse" in sys.argv
    os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")
    dump = tempfile.mkdtemp(prefix="fa4-sass-")
    os.environ["CUTE_DSL_KEEP_CUBIN"] = "1"
    os.chdir(dump)  # where the DSL keeps the cubin
    import_past_torch()
    import numpy as np
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack
    from flash_attn.cute.flash_fwd_sm90 import FlashAttentionForwardSm90
    from flash_attn.cute.utils import AuxData

    # interface.py's _tile_size_fwd_sm90 for bf16 without a mask (and with one: the same).
    tile_m, tile_n = {64: (192, 128), 128: (128, 128), 256: (128, 80)}[d]

    def bf16(shape):
        t = from_dlpack(np.zeros(shape, dtype=np.uint16), assumed_align=16)
        t.element_type = cutlass.BFloat16
        return t.mark_layout_dynamic(leading_dim=len(shape) - 1)

    b, s, h = 1, 8192, 16  # dynamic in the kernel: any shape compiles the same code
    q, k, v, o = (bf16((b, s, h, d)) for _ in range(4))
    lse = None
    if with_lse:
        lse = from_dlpack(np.zeros((b, h, s), dtype=np.float32), assumed_align=4).mark_layout_dynamic(leading_dim=2)
    fa = FlashAttentionForwardSm90(
        cutlass.BFloat16, d, d, 1, is_causal=causal, is_local=False, pack_gqa=False, tile_m=tile_m,
        tile_n=tile_n, num_stages=2, num_threads=128 * (tile_m // 64 + 1), Q_in_regs=False,
        intra_wg_overlap=True, mma_pv_is_rs=True, mask_mod=None, score_mod=None, has_aux_tensors=False,
        q_subtile_factor=None, paged_kv_non_tma=False)
    stream = cute.runtime.make_fake_stream(use_tvm_ffi_env_stream=False)
    cute.compile(fa, q, k, v, o, lse, cutlass.Float32(d ** -0.5), None, None, None, None, None, None, None,
                 None, None, AuxData(None, None), None, None, stream)
    cubins = [f for f in os.listdir(dump) if f.endswith(".cubin")]
    if len(cubins) != 1:
        sys.exit(f"fa4_sass.py: expected one cubin in {dump}, found {cubins}")
    cuobjdump = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump") or "cuobjdump"
    listing = subprocess.run([cuobjdump, "-sass", os.path.join(dump, cubins[0])], check=True,
                             capture_output=True, text=True).stdout
    sys.stdout.write(listing)
    shutil.rmtree(dump)


if __name__ == "__main__":
    main()
