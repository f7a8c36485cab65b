#!/usr/bin/env bash
# Brings the cuDNN frontend's Python package (nvidia-cudnn-frontend, `import cudnn`) to a GPU
# machine that has PyTorch but no registry, for bench/baselines.py's `cudnn-fp8` row (cuDNN's
# FP8 SDPA forward). One wheel, about 12 MiB: it fits one device call beside the GPU bundle,
# so unlike scripts/fa4-wheels.sh nothing is cut in pieces.
#
# Usage: scripts/cudnn-frontend-wheel.sh [--python-version 3.12] [--platform TAG]...
#
#   --python-version X.Y  the GPU machine's python3 (the one that holds PyTorch; 3.12 on
#                         the lent H100/H200 machines): the wheel holds a compiled module
#   --platform TAG        a pip platform tag; repeatable, and replaces the defaults
#                         (manylinux_2_28 down to manylinux2014, x86-64)
#
# Out (dist/ is gitignored): dist/cudnn-frontend/ with the wheel, SHA256SUMS and
# install-cudnn-frontend.sh. On the GPU machine, in a device call that carries that folder:
#   bash dist/cudnn-frontend/install-cudnn-frontend.sh
# It checks the sha256, installs the wheel with pip --no-deps into /tmp/cudnn-fe, writes
# /tmp/cudnn-fe/env.sh (PYTHONPATH) and shows which cuDNN the frontend found. Then:
#   . /tmp/cudnn-fe/env.sh && python3 bench/baselines.py --backends cudnn-fp8 --shape ...
# bench/README.md, "The FP8 baseline", has the exact calls.
#
# What the wheel needs and the GPU machine has:
#   * libcudnn.so.9: not in the wheel; `import cudnn` dlopens it (cudnn/__init__.py,
#     _dlopen_cudnn): first from a folder on LD_LIBRARY_PATH, else nvidia/cudnn/lib/ under
#     this python's purelib (where PyTorch's nvidia-cudnn-cu13 dependency puts it), else
#     `libcudnn.so.9` by name. baselines.py points it at the very library PyTorch loaded.
#   * its declared dependencies, nvidia-cutlass-dsl[cu13] and apache-tvm-ffi, serve the
#     frontend's own CuTe DSL kernels (the "FROST" engines, Blackwell's FP8 attention among
#     them); `import cudnn` and graphs the cuDNN library runs need neither, and on Hopper
#     the library runs FP8 SDPA. Hence --no-deps, as for FlashAttention-4.
#   * cuda-bindings (cuda-python), for the frontend's device queries: PyTorch's environment
#     has it.
set -euo pipefail
cd "$(dirname "$0")/.."

# The pin: the newest release when this was written (1.32.0, 2026), whose sdpa_fp8 call
# bench/baselines.py copies from the frontend's own FP8 test.
PIN=nvidia-cudnn-frontend==1.32.0

python_version=3.12
platforms=()
while [ $# -gt 0 ]; do
    case "$1" in
        --python-version) python_version="$2"; shift 2 ;;
        --python-version=*) python_version="${1#*=}"; shift ;;
        --platform) platforms+=("$2"); shift 2 ;;
        --platform=*) platforms+=("${1#*=}"); shift ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "cudnn-frontend-wheel.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
done
if [ ${#platforms[@]} -eq 0 ]; then
    platforms=(manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64
        manylinux_2_17_x86_64 manylinux2014_x86_64)
fi

out=dist/cudnn-frontend
rm -rf "$out"
mkdir -p "$out"
platform_args=()
for p in "${platforms[@]}"; do platform_args+=(--platform "$p"); done
python3 -m pip download --disable-pip-version-check --no-deps --only-binary=:all: \
    --implementation cp --python-version "$python_version" "${platform_args[@]}" \
    -d "$out" "$PIN"

name="${PIN%%==*}"
version="${PIN#*==}"
shopt -s nullglob
found=("$out/${name//-/_}-${version}-"*.whl)
shopt -u nullglob
if [ ${#found[@]} -ne 1 ]; then
    echo "cudnn-frontend-wheel.sh: expected one wheel for $PIN in $out, found ${#found[@]}" >&2
    exit 1
fi
wheel="$(basename "${found[0]}")"
(cd "$out" && sha256sum "$wheel" >SHA256SUMS)

cat >"$out/install-cudnn-frontend.sh" <<'INSTALL'
#!/usr/bin/env bash
# The cuDNN frontend's wheel (made by scripts/cudnn-frontend-wheel.sh), on the GPU machine:
#   bash dist/cudnn-frontend/install-cudnn-frontend.sh
# Checks the sha256, installs the wheel with pip --no-deps into $CUDNN_FE_TARGET
# (/tmp/cudnn-fe), writes $CUDNN_FE_TARGET/env.sh, which sets PYTHONPATH, and imports the
# frontend after torch to show which cuDNN library it found. $PYTHON: python3.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
target="${CUDNN_FE_TARGET:-/tmp/cudnn-fe}"
python="${PYTHON:-python3}"

(cd "$here" && sha256sum --quiet -c SHA256SUMS) \
    || { echo "cudnn-fe: $here is damaged (sha256 above)" >&2; exit 1; }
wheel="$here/$(awk '{print $2}' "$here/SHA256SUMS")"
rm -rf "$target"
PIP_ROOT_USER_ACTION=ignore "$python" -m pip install -q --disable-pip-version-check --no-index \
    --no-deps --no-compile --no-cache-dir --target "$target" "$wheel"
# The wheel has no .pth file: its folder on PYTHONPATH is all `import cudnn` needs.
printf 'export PYTHONPATH=%s${PYTHONPATH:+:$PYTHONPATH}\n' "$target" >"$target/env.sh"
echo "cudnn-fe: installed into $target; to use it: . $target/env.sh"
# torch first: it loads its own libcudnn.so.9, and the frontend, which dlopens by name when
# no folder on LD_LIBRARY_PATH or under purelib has one, then gets that same library.
PYTHONPATH="$target${PYTHONPATH:+:$PYTHONPATH}" "$python" -c '
import torch
torch_cudnn = torch.backends.cudnn.version()
import cudnn
try:
    found = cudnn.backend_version_string()
except Exception as e:
    found = f"none ({e})"
print("cudnn-fe: nvidia-cudnn-frontend", cudnn.__version__, "from", cudnn.__file__)
print("cudnn-fe: cuDNN the frontend loaded:", found, "| torch", torch.__version__, "uses cuDNN", torch_cudnn)
' || { echo "cudnn-fe: installed, but the frontend does not import (above)" >&2; exit 1; }
INSTALL
chmod +x "$out/install-cudnn-frontend.sh"

echo
echo "wheel ($out, for CPython $python_version on ${platforms[0]}):"
(cd "$out" && stat -c '  %10s  %n' -- "$wheel" && sed 's/^/  sha256 /' SHA256SUMS)
echo
echo "on the GPU machine: one device call carrying [\"$out\"], e.g."
echo "  bash $out/install-cudnn-frontend.sh && . /tmp/cudnn-fe/env.sh && python3 bench/baselines.py --backends cudnn-fp8,sdpa-fp8 --shape 1,16,4096,128"
echo "(/tmp survives only while the machine stays warm: reinstall on a fresh one)"
