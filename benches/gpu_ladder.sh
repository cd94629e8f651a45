#!/usr/bin/env bash
# The measurements of a lent GPU machine in one call (book: Benchmarks, "On a real GPU"): the
# bench ladder, the piles at rest, the default scene end to end, and the test suite on that
# adapter. Built here, carried there with the Vulkan loader (.gl, see the device notes):
#   cargo build --release && cargo test --release --no-run
#   run: benches/gpu_ladder.sh target/release/deps/suite-<hash>
#   carry: .gl, target/release/bristlecone, that suite binary (and any BENCHES binaries)
# PARTS (default "ladder rest depth column default suite"; "held" too on request), SIZES,
# REST_SIZES, REST_ARGS, HELD_SIZES, SOLVERS (the ladder's and held's, default apgd),
# SUITE_FILTER (a test-name filter) and BENCHES choose what runs.
# Each part runs under its own timeout so a slow one cannot cost the others; what comes back
# is at most eight files under $OUT.
set -u
OUT=${OUT:-/tmp/gpu_ladder}
SUITE=${1:-}
SIZES=${SIZES:-10000,100000,1000000,10000000}
REST_SIZES=${REST_SIZES:-10000,100000,1000000}
REST_ARGS=${REST_ARGS:-}          # e.g. "--iterations 200"
PARTS=${PARTS:-ladder rest depth column default suite}
HELD_SIZES=${HELD_SIZES:-10000000}
SOLVERS=${SOLVERS:-apgd}
SUITE_FILTER=${SUITE_FILTER:-}
has() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
BC=target/release/bristlecone
W=/tmp/gpu_ladder_work
rm -rf "$W"
mkdir -p "$OUT" "$W"

if ls .gl/*.deb >/dev/null 2>&1 && ! ldconfig -p | grep -q libvulkan; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
# Tests find their assets through the checkout path they were built in.
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv >"$W/info.txt" 2>&1
$BC info >>"$W/info.txt" 2>&1
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -e $icd ] && ! $BC info 2>&1 | grep -qi nvidia; then
    export VK_DRIVER_FILES=$icd
    export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
    echo "--- with VK_DRIVER_FILES" >>"$W/info.txt"
    $BC info >>"$W/info.txt" 2>&1
fi
cat "$W/info.txt" | tee "$OUT/bench.log"
# Every part appends to $OUT/bench.log as it runs, so a run stopped at its limit still returns
# what the parts before finished.
part() { # name, timeout, bench arguments...
    local name=$1 limit=$2
    shift 2
    has "$name" || return 0
    echo "=== $name: bench $*" >>"$OUT/bench.log"
    timeout "$limit" $BC bench "$@" --out "$W/$name" >>"$OUT/bench.log" 2>&1
    echo "$name exit $?" >>"$OUT/bench.log"
    cp "$W/$name/bench.csv" "$OUT/$name.csv" 2>/dev/null
}

# 1. The ladder: cold lattices, the default warm-up (2 steps) and step counts.
part ladder 180 --sizes "$SIZES" --solver "$SOLVERS"
# 2. The largest piles held: 20 unmeasured and 10 measured steps from the lattice, every
#    solver in SOLVERS under a 100-sweep cap (the load reaches deeper than in the ladder's 7;
#    under 50 sweeps the 10^7 pile reaches about 1 % d by step 30 and is still sinking).
part held 200 --scene pile --sizes "$HELD_SIZES" --warmup 20 --steps 10 --iterations 100 \
    --solver "$SOLVERS"
# 3. The piles at rest: 100 unmeasured steps settle the lattice first.
part rest 100 --scene pile --sizes "$REST_SIZES" --warmup 100 --steps 20 $REST_ARGS
# 3b. The piles at rest under a 50-sweep cap, APGD and block Gauss-Seidel side by side in one
#     run: sweeps a step, capped steps and penetration against the depth of the pile.
part depth 150 --scene pile --sizes "$REST_SIZES" --warmup 100 --steps 20 --iterations 50 \
    --solver apgd,gauss_seidel
# 3c. Sweeps against depth: columns 6 grains wide, 25-200 layers, the lattice and a random
#     pack settled first (saved under the work dir), every solver, a 200-sweep cap.
part column 300 --scene column --layers 25,50,100,200 --pack lattice,random --warmup 10 \
    --steps 30 --iterations 200 --solver apgd,gauss_seidel,jacobi

# 4. The default scene end to end (the Quick start's first command), then with Gauss-Seidel
#    under the relaxed and the exact cone (a copy of the scene beside it, deleted after).
default_run() { # name, scene
    local start
    start=$(date +%s%N)
    echo "=== $1" >>"$OUT/default.log"
    timeout 45 $BC run "$2" --out "$W/runs/$1" >>"$OUT/default.log" 2>&1
    echo "$1 exit $? wall $((($(date +%s%N) - start) / 1000000)) ms" >>"$OUT/default.log"
    (cd "$W/runs" && tar czf "$OUT/default_stats.tgz" */stats.csv 2>/dev/null)
}
if has default; then
    default_run default assets/scenes/default.toml
    d=assets/scenes/gpu_ladder_gs.toml
    sed 's/^kind = "apgd"/kind = "gauss_seidel"/' assets/scenes/default.toml >$d
    default_run default_gs $d
    sed 's/^kind = "apgd"/kind = "gauss_seidel"\ncone = "exact"/' assets/scenes/default.toml >$d
    default_run default_gs_exact $d
    rm -f $d
fi

# 4. Criterion-free bench binaries named in BENCHES (cargo bench --no-run; carry each):
#    e.g. the per-dispatch cost and the one-workgroup crossover, benches/dispatch.rs, fused.rs.
for b in ${BENCHES:-}; do
    echo "=== $b" >>"$OUT/benches.log"
    timeout 120 "$b" --bench >>"$OUT/benches.log" 2>&1
    echo "exit $?" >>"$OUT/benches.log"
done

# 5. The test suite on this adapter: every GPU stage against its CPU twin.
if [ -n "$SUITE" ] && has suite; then
    timeout 120 "$SUITE" --test-threads 16 $SUITE_FILTER >"$OUT/suite.log" 2>&1
    echo "suite exit $?" >>"$OUT/suite.log"
fi

grep -v "^$\|^stage times\|^bw_\|^pen/d\|^scenes:\|^adapter\|^warm-up" "$OUT/bench.log"
has default && echo "=== default" && grep -E "exit|steps used|penetration" "$OUT/default.log"
[ -e "$OUT/benches.log" ] && tail -40 "$OUT/benches.log"
if [ -n "$SUITE" ] && has suite; then
    echo "=== suite"; grep -E "^test result|FAILED|panicked" "$OUT/suite.log" | head -30; tail -1 "$OUT/suite.log"
fi
