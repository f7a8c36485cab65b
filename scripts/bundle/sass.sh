#!/usr/bin/env bash
# Stage N's SASS, disassembled from the fatbin embedded in `flashlab`, with the static
# count of the instructions that tell each stage's story, per kernel and architecture:
#   HMMA/HGMMA (tensor cores: mma.sync / wgmma), LDSM (ldmatrix), LDGSTS (cp.async),
#   FFMA and MUFU (CUDA-core math, exp2), BAR, SHFL, LDS/STS, LDG/STG, UTMALDG (TMA).
# The full listing is saved as sass-stage-N.sass (in $SASS_OUT, default the current folder).
#
# Usage: sass.sh N [--arch sm_90a] [--kernel REGEX]
#        sass.sh --count LISTING [--arch ...] [--kernel ...]   (count an existing
#                                             `cuobjdump --dump-sass` listing; no GPU needed)
# cuobjdump comes from $CUOBJDUMP, $PATH, $CUDA_HOME/bin or /usr/local/cuda/bin.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/unpack.sh"

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

count_sass() { # listing arch_filter kernel_filter
    awk -v want_arch="$2" -v want_kernel="$3" '
    BEGIN {
        ncols = split("HMMA HGMMA LDSM LDGSTS UTMALDG FFMA MUFU BAR SHFL LDS STS LDG STG", cols, " ")
        for (i = 1; i <= ncols; i++) tracked[cols[i]] = 1
        arch = "?"; kernel = ""; nk = 0
    }
    /^[ \t]*arch = / { arch = $3; next }
    /Function : / {
        kernel = $0; sub(/.*Function : /, "", kernel); sub(/[ \t]+$/, "", kernel)
        keep = (want_arch == "" || arch == want_arch) && (want_kernel == "" || kernel ~ want_kernel)
        key = arch SUBSEP kernel
        if (keep && !(key in seen)) { seen[key] = 1; order[++nk] = key }
        next
    }
    /^[ \t]*\/\*[0-9a-f]+\*\// {
        if (kernel == "" || !keep) next
        line = $0
        sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line)
        sub(/^@!?U?P[0-9T]+[ \t]+/, "", line)          # guard predicate: @P0, @!PT, @UP1
        split(line, words, /[ \t;]+/)
        op = words[1]; sub(/\..*/, "", op)             # HMMA.16816.F32.BF16 -> HMMA
        if (op == "") next
        total[key]++
        if (op in tracked) n[key, op]++
    }
    END {
        if (nk == 0) {
            print "no kernels found" (want_arch != "" ? " for arch " want_arch : "") \
                  (want_kernel != "" ? " matching " want_kernel : "") > "/dev/stderr"
            exit 1
        }
        printf "%-8s %-34s", "arch", "kernel"
        for (i = 1; i <= ncols; i++) printf " %7s", cols[i]
        printf " %7s\n", "total"
        for (k = 1; k <= nk; k++) {
            key = order[k]; split(key, parts, SUBSEP)
            printf "%-8s %-34s", parts[1], parts[2]
            for (i = 1; i <= ncols; i++) printf " %7d", n[key, cols[i]]
            printf " %7d\n", total[key]
        }
    }' "$1"
}

find_cuobjdump() {
    local c
    for c in "${CUOBJDUMP:-}" "$(command -v cuobjdump || true)" \
             "${CUDA_HOME:+$CUDA_HOME/bin/cuobjdump}" /usr/local/cuda/bin/cuobjdump; do
        if [ -n "$c" ] && [ -x "$c" ]; then echo "$c"; return 0; fi
    done
    # Like sanitize.sh and ncu.sh: name what is missing and where it usually lives.
    echo "sass.sh: cuobjdump not found: set CUOBJDUMP=/path/to/cuobjdump, or install the CUDA toolkit (it lives in \$CUDA_HOME/bin; \`just cuda\` puts cuobjdump and nvdisasm in .toolchain/cuda/nvidia/cu13/bin, and a .toolchain/cuda from before they were added needs \`rm -rf .toolchain/cuda\` first). GPU machines with the toolkit have it." >&2
    return 1
}

[ $# -ge 1 ] || usage
mode=stage; listing=""; n=""
case "$1" in
    --count) [ $# -ge 2 ] || usage; mode=count; listing="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) n="$1"; shift
       [[ "$n" =~ ^[0-9]+$ ]] || { echo "sass.sh: the stage must be a number, not '$n'" >&2; exit 2; } ;;
esac
arch=""; kernel=""
while [ $# -gt 0 ]; do
    case "$1" in
        --arch) arch="${2:?--arch needs a value like sm_90a}"; shift 2 ;;
        --kernel) kernel="${2:?--kernel needs a regex}"; shift 2 ;;
        *) echo "sass.sh: unknown argument '$1'" >&2; usage ;;
    esac
done

if [ "$mode" = count ]; then
    [ -r "$listing" ] || { echo "sass.sh: cannot read $listing" >&2; exit 2; }
    count_sass "$listing" "$arch" "$kernel"
    exit
fi

flashlab="$here/flashlab"
[ -x "$flashlab" ] || { echo "sass.sh: no flashlab next to this script ($flashlab)" >&2; exit 2; }
cuobjdump="$(find_cuobjdump)" || exit 2
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
"$flashlab" dump-fatbin "$n" --out "$tmp/stage.fatbin"
out_dir="${SASS_OUT:-.}"; mkdir -p "$out_dir"
listing="$out_dir/sass-stage-$n.sass"
"$cuobjdump" --dump-sass "$tmp/stage.fatbin" > "$listing"
echo "stage $n: static instruction counts (SASS in the binary, not executed counts); listing in $listing"
count_sass "$listing" "$arch" "$kernel"
