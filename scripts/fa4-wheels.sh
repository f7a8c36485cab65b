#!/usr/bin/env bash
# Brings FlashAttention-4 (flash_attn.cute) and the packages it needs to a GPU machine that
# has PyTorch but no registry: downloads the pinned wheels here, then lays them out as
# folders small enough for one device call each (the device tool carries at most 64 MiB
# a call, and the CUDA 13 CuTe DSL wheel alone is about 88 MiB, so it is cut in pieces).
#
# Usage: scripts/fa4-wheels.sh [--python-version 3.12] [--platform TAG]... [--part-mib 28]
#
#   --python-version X.Y  the GPU machine's python3 (the one that holds PyTorch; 3.12 on
#                         the lent H100/H200 machines)
#   --platform TAG        a pip platform tag; repeatable, and replaces the defaults
#                         (manylinux_2_28 down to manylinux2014, x86-64)
#   --part-mib N          most payload per part folder, in MiB (default 28: a part and the
#                         repository's own files, about 31 MiB with the records, stay
#                         under 64; the GPU bundle, about 26 MiB, then travels in a call
#                         of its own after the last part)
#
# Out (dist/ is gitignored):
#   dist/fa4-wheels/         the wheels as pip saved them, and SHA256SUMS of each
#   dist/fa4-part1/, ...     the wheels, the big one split with `split`, each part with
#                            install-fa4.sh, fa4-files.sha256 (every piece and wheel of
#                            every part) and fa4-wheels.sha256 (the whole wheels)
#
# On the GPU machine, one device call per part, in any order, while the machine stays
# warm (it keeps /tmp between calls only then), each carrying its part:
#   bash dist/fa4-partN/install-fa4.sh
# Each call stashes its part in /tmp/fa4-parts; the call that completes the set joins the
# pieces, checks every sha256, installs all wheels with pip --no-deps into /tmp/fa4 and
# writes /tmp/fa4/env.sh, which sets PYTHONPATH (pip --target leaves the .pth file of
# nvidia-cutlass-dsl unread, so its folder has to be named there). Then:
#   . /tmp/fa4/env.sh && ./flashlab bench --baselines ...
# book/src/results.md, "FlashAttention-4 on the GPU machine", has the exact calls.
set -euo pipefail
cd "$(dirname "$0")/.."

# The pins: FlashAttention-4's Hopper kernel and exactly what it imports that the GPU
# machine lacks (torch, einops, cuda-bindings, protobuf and typing-extensions are there).
# nvidia-cutlass-dsl is a shell whose parts are the libs-* wheels; libs-cu13 matches the
# machine's CUDA 13 PyTorch.
PINS=(
    flash-attn-4==4.0.0b36
    nvidia-cutlass-dsl==4.8.1
    nvidia-cutlass-dsl-libs-base==4.8.1
    nvidia-cutlass-dsl-libs-core==4.8.1
    nvidia-cutlass-dsl-libs-cu13==4.8.1
    quack-kernels==0.6.5
    apache-tvm-ffi==0.1.15.post2
    torch-c-dlpack-ext==0.1.5
)

python_version=3.12
platforms=()
part_mib=28
while [ $# -gt 0 ]; do
    case "$1" in
        --python-version) python_version="$2"; shift 2 ;;
        --python-version=*) python_version="${1#*=}"; shift ;;
        --platform) platforms+=("$2"); shift 2 ;;
        --platform=*) platforms+=("${1#*=}"); shift ;;
        --part-mib) part_mib="$2"; shift 2 ;;
        --part-mib=*) part_mib="${1#*=}"; shift ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "fa4-wheels.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
done
if [ ${#platforms[@]} -eq 0 ]; then
    platforms=(manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64
        manylinux_2_17_x86_64 manylinux2014_x86_64)
fi

wheels_dir=dist/fa4-wheels
mkdir -p "$wheels_dir"
platform_args=()
for p in "${platforms[@]}"; do platform_args+=(--platform "$p"); done
python3 -m pip download --disable-pip-version-check --no-deps --only-binary=:all: \
    --implementation cp --python-version "$python_version" "${platform_args[@]}" \
    -d "$wheels_dir" "${PINS[@]}"

# The file pip saved for each pin (others in the folder, from other pins, stay out).
wheels=()
for pin in "${PINS[@]}"; do
    name="${pin%%==*}"
    version="${pin#*==}"
    shopt -s nullglob
    found=("$wheels_dir/${name//-/_}-${version}-"*.whl)
    shopt -u nullglob
    if [ ${#found[@]} -ne 1 ]; then
        echo "fa4-wheels.sh: expected one wheel for $pin in $wheels_dir, found ${#found[@]}" >&2
        exit 1
    fi
    wheels+=("$(basename "${found[0]}")")
done
(cd "$wheels_dir" && sha256sum "${wheels[@]}" >SHA256SUMS)

# The parts: wheels over the limit cut into pieces of at most the limit (NAME.part-00,
# -01, ...), then every piece and wheel, largest first, into the first part with room.
limit=$((part_mib * 1024 * 1024))
rm -rf dist/fa4-part* dist/.fa4-staging
staging=dist/.fa4-staging
mkdir -p "$staging"
for w in "${wheels[@]}"; do
    if [ "$(stat -c %s "$wheels_dir/$w")" -gt "$limit" ]; then
        split -b "$limit" -d -a 2 "$wheels_dir/$w" "$staging/$w.part-"
    else
        cp "$wheels_dir/$w" "$staging/"
    fi
done
shopt -s nullglob
payload=("$staging"/*)
shopt -u nullglob
(cd "$staging" && sha256sum -- "${payload[@]##*/}" | sort -k2) >"$staging/fa4-files.sha256"
cp "$wheels_dir/SHA256SUMS" "$staging/fa4-wheels.sha256"

used=()
while read -r size file; do
    i=0
    while [ $i -lt ${#used[@]} ] && [ $((used[i] + size)) -gt "$limit" ]; do i=$((i + 1)); done
    if [ $i -eq ${#used[@]} ]; then used+=(0); mkdir -p "dist/fa4-part$((i + 1))"; fi
    used[i]=$((used[i] + size))
    mv "$staging/$file" "dist/fa4-part$((i + 1))/"
done < <(cd "$staging" && stat -c '%s %n' -- "${payload[@]##*/}" | sort -rn)
parts=${#used[@]}

# install-fa4.sh: the same in every part; it runs on the GPU machine.
for n in $(seq 1 "$parts"); do
    part=dist/fa4-part$n
    cp "$staging/fa4-files.sha256" "$staging/fa4-wheels.sha256" "$part/"
    cat >"$part/install-fa4.sh" <<'INSTALL'
#!/usr/bin/env bash
# FlashAttention-4's wheels, one part a device call (made by scripts/fa4-wheels.sh).
# Run each part's copy, in any order, on the same warm machine:
#   bash dist/fa4-partN/install-fa4.sh
# It stashes this part in $FA4_PARTS (/tmp/fa4-parts); once every piece is there it joins
# them, checks every sha256, installs the wheels with pip --no-deps into $FA4_TARGET
# (/tmp/fa4) and writes $FA4_TARGET/env.sh, which sets PYTHONPATH. $PYTHON: python3.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
stash="${FA4_PARTS:-/tmp/fa4-parts}"
target="${FA4_TARGET:-/tmp/fa4}"
python="${PYTHON:-python3}"

(cd "$here" && sha256sum --quiet --ignore-missing -c fa4-files.sha256) \
    || { echo "fa4: $here is damaged (sha256 above)" >&2; exit 1; }
mkdir -p "$stash"
cp "$here"/* "$stash/"
cd "$stash"
missing=$(awk '{print $2}' fa4-files.sha256 | while read -r f; do [ -f "$f" ] || echo "$f"; done)
if [ -n "$missing" ]; then
    echo "fa4: $(basename "$here") is stashed in $stash; still to come (carry the other part(s)"
    echo "and run their install-fa4.sh before this machine is given back):"
    echo "$missing" | sed 's/^/  /'
    exit 0
fi
sha256sum --quiet -c fa4-files.sha256
wheels=$(awk '{print $2}' fa4-wheels.sha256)
for w in $wheels; do
    if [ ! -f "$w" ]; then cat "$w".part-* >"$w"; fi
done
sha256sum --quiet -c fa4-wheels.sha256 || { echo "fa4: a joined wheel is wrong (sha256 above)" >&2; exit 1; }
rm -rf "$target"
# shellcheck disable=SC2086  # one word per wheel file name
PIP_ROOT_USER_ACTION=ignore "$python" -m pip install -q --disable-pip-version-check --no-index \
    --no-deps --no-compile --no-cache-dir --target "$target" $wheels
# pip --target leaves .pth files unread (nvidia-cutlass-dsl's puts
# nvidia_cutlass_dsl/dsl_packages, where `cutlass` lives, on sys.path), and PYTHONPATH
# reads none: ask site what the target adds, and name all of it.
pythonpath=$("$python" - "$target" <<'PY'
import site, sys
before = list(sys.path)
site.addsitedir(sys.argv[1])
print(":".join(p for p in sys.path if p not in before))
PY
)
printf 'export PYTHONPATH=%s${PYTHONPATH:+:$PYTHONPATH}\n' "$pythonpath" >"$target/env.sh"
echo "fa4: installed into $target; to use it: . $target/env.sh   (or:"
echo "export PYTHONPATH=$pythonpath\${PYTHONPATH:+:\$PYTHONPATH} )"
PYTHONPATH="$pythonpath${PYTHONPATH:+:$PYTHONPATH}" "$python" -c '
import importlib.metadata as m
from flash_attn.cute import flash_attn_func
import cutlass
print("fa4: flash_attn.cute imports: flash-attn-4", m.version("flash-attn-4"), "| nvidia-cutlass-dsl", m.version("nvidia-cutlass-dsl"), "| cutlass from", cutlass.__file__)
' || { echo "fa4: installed, but flash_attn.cute does not import (above)" >&2; exit 1; }
INSTALL
    chmod +x "$part/install-fa4.sh"
done
rm -rf "$staging"

echo
echo "wheels ($wheels_dir, for CPython $python_version on ${platforms[0]}):"
(cd "$wheels_dir" && for w in "${wheels[@]}"; do printf '  %10d  %s\n' "$(stat -c %s "$w")" "$w"; done)
echo "parts (at most $part_mib MiB of payload each):"
for n in $(seq 1 "$parts"); do
    printf '  dist/fa4-part%d  %s bytes in all:\n' "$n" "$(du -cb "dist/fa4-part$n"/* | tail -1 | cut -f1)"
    (cd "dist/fa4-part$n" && stat -c '    %10s  %n' -- *)
done
echo
echo "on the GPU machine: one device call per part, back to back on the same warm machine,"
echo "each carrying its part, e.g. carry [\"dist/fa4-part1\"] and the command"
echo "  bash dist/fa4-part1/install-fa4.sh"
echo "then, in the last call or a later one: . /tmp/fa4/env.sh before ./flashlab bench --baselines"
