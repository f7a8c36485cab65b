# flashlab: the verbs users type. `just --list` shows them.

toolchain := justfile_directory() / ".toolchain/cuda"
nvcc_bin := toolchain / "nvidia/cu13/bin"
# The pinned CUDA 13.0 compiler from PyPI (used only when no nvcc is installed), with
# cuobjdump and nvdisasm 13.2 (the oldest 13.x on PyPI; they read 13.0's binaries).
cuda_packages := "nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 nvidia-cuda-cuobjdump==13.2.86 nvidia-cuda-nvdisasm==13.2.86"

export PATH := env_var("PATH") + ":" + nvcc_bin

default:
    @just --list

# Every recipe that runs flashlab first ensures a compiler (`_nvcc`, quiet when one is
# found) and builds it in view (`_flashlab`), so `just stage 3` works from a fresh clone.

# Check stage N against the CPU oracle and time it: `just stage 2 --seqlen 8192 --causal`
stage N *FLAGS: _kernels
    cargo run --release --quiet -- stage {{N}} {{FLAGS}}

# List the stages
list: _kernels
    cargo run --release --quiet -- list

# The GPU and its measured speed of light
info: _kernels
    cargo run --release --quiet -- info

# Registers, shared memory and spills per kernel (all stages, or stage N)
resources *ARGS: _kernels
    cargo run --release --quiet -- resources {{ARGS}}

# Every test, GPU tests too when a GPU is present (else shown as ignored); then the book build and browser check if mdbook is installed (`just book-tools`) or CI is set, else says it skipped them
test: cuda
    #!/usr/bin/env bash
    set -euo pipefail
    # `just cuda` guarantees a compiler, so every kernel must have compiled.
    export FLASHLAB_REQUIRE_KERNELS=1
    # In release, as `just stage` and the book build: one build of the workspace, not two
    # (a debug tree of ~60 test binaries, each embedding the stages' kernels, is gigabytes),
    # and the GPU tests run the kernels as users time them.
    if nvidia-smi -L >/dev/null 2>&1; then
        echo "GPU found: running the GPU tests too"
        cargo test --release --workspace -- --include-ignored
    else
        echo "no GPU found: GPU tests are ignored (they say why)"
        cargo test --release --workspace
    fi
    if [ -x .toolchain/mdbook/bin/mdbook ] || [ -n "${CI:-}" ]; then just book-check; else echo "mdbook not installed: skipping the book build and browser check (run \`just book-tools\`)"; fi

# The property tests of the oracle with many more cases
proptest cases="4096":
    PROPTEST_CASES={{cases}} cargo test --release -p reference

# Install the pinned CUDA 13.0 compiler into .toolchain/ when no nvcc is found
cuda: (_nvcc "say")

# Finds nvcc (and says where only when asked), or installs the pinned one.
[private]
_nvcc say="":
    #!/usr/bin/env bash
    set -euo pipefail
    # A workspace toolchain from before cuobjdump and nvdisasm joined the pinned set (they
    # count the tensor-core instructions `just resources` shows): pip cannot add them to
    # it in place, so it is installed afresh.
    if [ -x "{{nvcc_bin}}/nvcc" ] && [ ! -x "{{nvcc_bin}}/cuobjdump" ]; then
        echo "the workspace's CUDA toolchain lacks cuobjdump and nvdisasm: installing it afresh"
        rm -rf "{{toolchain}}"
    fi
    for c in "${NVCC:-}" "${CUDA_HOME:+$CUDA_HOME/bin/nvcc}" "$(command -v nvcc || true)" /usr/local/cuda/bin/nvcc; do
        if [ -n "$c" ] && [ -x "$c" ]; then
            if [ -n "{{say}}" ]; then echo "nvcc found: $c"; fi
            exit 0
        fi
    done
    echo "no nvcc found: installing the pinned CUDA 13.0 compiler into {{toolchain}}"
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --target "{{toolchain}}" {{cuda_packages}}
    "{{nvcc_bin}}/nvcc" --version | tail -n 1

# A compiler, then flashlab built with every kernel.
[private]
_kernels: (_nvcc "") _flashlab

# Builds flashlab with cargo's progress in view: `cargo run --quiet` alone would hide a
# first build of one to two minutes (every stage's kernels compile) behind silence.
[private]
_flashlab:
    #!/usr/bin/env bash
    set -euo pipefail
    if [ ! -x "${CARGO_TARGET_DIR:-target}/release/flashlab" ]; then
        echo "first build: flashlab and every stage's CUDA kernels for sm_80 and sm_90a (one to two minutes; later runs rebuild only what changed)"
    fi
    cargo build --release --bin flashlab

# compute-sanitizer memcheck, racecheck and synccheck of stage N on a small problem
sanitize N: _kernels
    cp scripts/bundle/unpack.sh scripts/bundle/sanitize.sh target/release/
    target/release/sanitize.sh {{N}}

# One folder that runs on a GPU machine without Rust: the CLI, the test binaries, scripts
gpu-bundle out="dist/flashlab-gpu": _kernels
    scripts/gpu-bundle.sh {{out}}

# --- layout-viz: CuTe layouts, hardware atoms and bank maps drawn as SVG ---

# layout-viz: `just layout draw tv mma-m16n8k16-a`, `just layout eval "(8,64):(64,1)" 9`, `just layout op complement 4:1 24`, `just layout --help`; a drawing goes to target/figures/ (or --out FILE, or stdout when piped)
[positional-arguments]
layout *ARGS: _layout-viz
    #!/usr/bin/env bash
    set -euo pipefail
    args=("$@")
    # An SVG printed on a terminal is a wall of text: give a `draw` without --out a file,
    # named after its arguments. Piped output, --json and --list are left alone.
    out=""
    if [ "${1:-}" = draw ] && [ $# -ge 2 ] && [ -t 1 ]; then
        out=yes
        for a in "$@"; do
            case "$a" in --out|--out=*|--json|--list|-h|--help|help) out="" ;; esac
        done
    fi
    if [ -n "$out" ]; then
        name=""
        for a in "${@:2}"; do name="${name:+${name}_}${a#--}"; done
        name="$(printf '%s' "$name" | sed -E 's/[^A-Za-z0-9.-]+/_/g; s/^_+|_+$//g' | cut -c1-100)"
        out="target/figures/$name.svg"
        mkdir -p target/figures
        args+=(--out "$out")
    fi
    cargo run --quiet -p layout-viz -- "${args[@]}"
    if [ -n "$out" ]; then echo "wrote $out"; fi

# Builds layout-viz with cargo's progress in view (its first build takes a while).
[private]
_layout-viz:
    @cargo build -p layout-viz

# --- The book (book/): built from the real sources, checked in a real browser ---

mdbook_version := "0.4.52"
mdbook := justfile_directory() / ".toolchain/mdbook/bin/mdbook"
# The playground's wasm-bindgen-cli must be the version of the wasm-bindgen crate that
# layout-viz-wasm links (pinned there; read from Cargo.lock).
wasm_bindgen := justfile_directory() / ".toolchain/wasm-bindgen/bin/wasm-bindgen"

# Install the book's tools: mdbook into .toolchain/mdbook, KaTeX and playwright-core into book/tools/node_modules (a no-op when present)
book-tools:
    #!/usr/bin/env bash
    set -euo pipefail
    if ! "{{mdbook}}" --version 2>/dev/null | grep -qx "mdbook v{{mdbook_version}}"; then
        echo "installing mdbook {{mdbook_version}} into .toolchain/mdbook (a few minutes)"
        cargo install --locked --quiet --root .toolchain/mdbook mdbook --version {{mdbook_version}}
    fi
    wasm_bindgen_version="$(sed -n '/^name = "wasm-bindgen"$/{n;s/^version = "\(.*\)"$/\1/p;}' Cargo.lock)"
    if ! "{{wasm_bindgen}}" --version 2>/dev/null | grep -qx "wasm-bindgen $wasm_bindgen_version"; then
        echo "installing wasm-bindgen-cli $wasm_bindgen_version into .toolchain/wasm-bindgen, for the playground (a few minutes)"
        # Only the one binary, without TLS (it serves the test runner's downloads): a third less to compile.
        install=(cargo install --quiet --no-default-features --bin wasm-bindgen --root .toolchain/wasm-bindgen wasm-bindgen-cli --version "$wasm_bindgen_version")
        # Its own lock file first; a registry mirror that lacks a version it pins (seen:
        # webpki-roots 1.0.11) gets the newest compatible versions instead.
        if ! "${install[@]}" --locked 2>/tmp/flashlab-wasm-bindgen-install.log; then
            echo "wasm-bindgen-cli's lock file does not resolve here ($(grep -m1 -o 'requirement `[^`]*`' /tmp/flashlab-wasm-bindgen-install.log || echo 'see /tmp/flashlab-wasm-bindgen-install.log')): installing it without --locked"
            "${install[@]}"
        fi
    fi
    if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
        rustup target add wasm32-unknown-unknown
    fi
    if [ ! -f book/tools/node_modules/.package-lock.json ] || [ book/tools/package-lock.json -nt book/tools/node_modules/.package-lock.json ]; then
        npm ci --prefix book/tools --no-audit --no-fund --silent
    fi
    # A system package is the user's call: say what to run rather than install it.
    if [ -z "${CHROMIUM:-}" ] && [ ! -x /usr/bin/chromium ]; then
        echo "no Chromium: \`just book-browser\` will skip the browser check; to run it, \`sudo apt-get install chromium\` (Debian) or set CHROMIUM=/path/to/chromium" >&2
    fi
    if [ ! -f book/src/vendor/katex/katex.min.css ]; then
        mkdir -p book/src/vendor/katex
        cp -r book/tools/node_modules/katex/dist/katex.min.css book/tools/node_modules/katex/dist/fonts book/src/vendor/katex/
    fi

# Draw the diagrams (layout-viz book, protocol-viz book) and what the book takes from the runs of record (`just plots`: bench/records/book.txt lists it), then build the book into book/build
book: book-tools _layout-viz _flashlab _playground
    cargo run --quiet -p layout-viz -- book --out book/src/generated
    cargo run --quiet -p protocol-viz -- book --out book/src/generated
    cargo run --release --quiet -- plots --book
    cd book && "{{mdbook}}" build

# The playground's module: layout-viz-wasm for wasm32, bound by wasm-bindgen, into book/src/generated/playground/.
[private]
_playground: book-tools
    cargo build --quiet -p layout-viz-wasm --target wasm32-unknown-unknown --profile playground
    "{{wasm_bindgen}}" --target no-modules --no-typescript --out-dir "${CARGO_TARGET_DIR:-target}/playground-bindgen" "${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/playground/layout_viz_wasm.wasm"
    node book/tools/playground-bundle.mjs "${CARGO_TARGET_DIR:-target}/playground-bindgen" book/src/generated/playground

# Serve the book at http://localhost:3000 with live reload (diagrams drawn once at start)
serve: book
    cd book && "{{mdbook}}" serve

# Open every chapter of the built book in headless Chromium: fails on broken images, missing diagrams, script errors, figure text under 10 px, anything wider than the text column, a caption promising hover text a figure does not show, markdown left as text (a code fence that ended early) or a #fragment link to no element; first on a page with one of each problem (it must fail on each); then drives the playground against the CLI, its redraws timed; screenshots of the stage chapters and Results go to book/build/screenshots/; without Chromium it says it skipped (fails when CI is set)
book-browser: _layout-viz
    node book/tools/browser-check-selftest.mjs
    node book/tools/browser-check.mjs book/build book/build/screenshots
    node book/tools/playground-check.mjs book/build "${CARGO_TARGET_DIR:-target}/debug/layout-viz"

# Build the book, then check it in headless Chromium (`just test` runs this when mdbook is installed or CI is set)
book-check: book book-browser

# --- Bench, plots, comparisons and profiling (`flashlab bench --help` says everything) ---

# Check and time every stage on the sweep (seqlen 512-16384, d 64/128, causal both): `just bench --baselines --plots`
bench *FLAGS: _kernels
    cargo run --release --quiet -- bench {{FLAGS}}

# Plots and tables: with no arguments, everything the book takes from the runs of record (bench/records/book.txt) into book/src/generated; `just plots FILE DIR` draws one bench.json or decode.json into DIR
plots from="" out="bench/out": _flashlab
    #!/usr/bin/env bash
    set -euo pipefail
    if [ -z "{{from}}" ]; then
        cargo run --release --quiet -- plots --book
    else
        cargo run --release --quiet -- plots --from "{{from}}" --out "{{out}}"
    fi

# Two stages side by side on one shape and seed: `just compare 3 4 --seqlen 8192 --causal`
compare A B *FLAGS: _kernels
    cargo run --release --quiet -- compare {{A}} {{B}} {{FLAGS}}

# What FP8 costs in accuracy, on the CPU (no GPU, no kernels): O's error against exact attention for the bf16 math and FP8 recipes (per-tensor or per-block scales, incoherent processing), on normal and outlier inputs: `just accuracy --dim 128`
accuracy *FLAGS:
    cargo run --release --quiet -- accuracy {{FLAGS}}

# Stage N's measured timeline: the timeline kernel checked and timed against the timed one (the instrumentation's overhead), a phase summary, and an SVG Gantt chart in bench/out/timeline-N.svg: `just timeline 11 --seqlen 8192 --blocks 3 --tiles 4..10`
timeline N *FLAGS: _kernels
    cargo run --release --quiet -- timeline {{N}} {{FLAGS}}

# Nsight Compute summary of stage N's kernels (tensor pipe, shared-memory wavefronts, occupancy, DRAM, stalls)
ncu N *FLAGS: _kernels
    cp scripts/bundle/unpack.sh scripts/bundle/ncu.sh target/release/
    target/release/ncu.sh {{N}} {{FLAGS}}

# Stage N's main loop as ptxas scheduled it, from its SASS (no GPU): the phases of a way around it and their static cycles: `just schedule 19 --kernel lazy_bf16_d128 [--listing] [--profile ncu-source.csv]`
schedule WHAT *FLAGS: _kernels
    cargo run --release --quiet -- schedule {{WHAT}} {{FLAGS}}

# Stage N's SASS with counts of HMMA/HGMMA, LDSM, LDGSTS, FFMA, MUFU... per kernel (CUOBJDUMP=... to choose one)
sass N *FLAGS: _kernels
    cp scripts/bundle/unpack.sh scripts/bundle/sass.sh target/release/
    target/release/sass.sh {{N}} {{FLAGS}}
