#!/usr/bin/env bash
# The measurements of a lent GPU machine in one call (book: Benchmarks, "On a real GPU"): the
# bench ladder, the piles at rest, the default scene end to end, and the test suite on that
# adapter. Built here, carried there with the Vulkan loader (.gl, see the device notes):
#   cargo build --release && cargo test --release --no-run
#   run: benches/gpu_ladder.sh target/release/deps/suite-<hash>
#   carry: .gl, target/release/bristlecone, that suite binary (and any BENCHES binaries)
# PARTS (default "ladder rest depth default suite"), SIZES, REST_SIZES, REST_ARGS and BENCHES
# choose what runs.
# Each part runs under its own timeout so a slow one cannot cost the others; what comes back
# is at most nine files under $OUT.
set -u
OUT=${OUT:-/tmp/gpu_ladder}
SUITE=${1:-}
SIZES=${SIZES:-10000,100000,1000000,10000000}
REST_SIZES=${REST_SIZES:-10000,100000,1000000}
REST_ARGS=${REST_ARGS:-}          # e.g. "--iterations 200"
PARTS=${PARTS:-ladder rest depth default suite}
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
cat "$W/info.txt"

# 1. The ladder: cold lattices, the default warm-up (2 steps) and step counts.
has ladder && timeout 200 $BC bench --sizes "$SIZES" --out "$W/ladder" >"$W/ladder.log" 2>&1
echo "ladder exit $?" >>"$W/ladder.log"
cp "$W/ladder/bench.csv" "$OUT/ladder.csv" 2>/dev/null

# 2. The piles at rest: 100 unmeasured steps settle the lattice first.
has rest && timeout 100 $BC bench --scene pile --sizes "$REST_SIZES" --warmup 100 --steps 20 $REST_ARGS \
    --out "$W/rest" >"$W/rest.log" 2>&1
echo "rest exit $?" >>"$W/rest.log"
cp "$W/rest/bench.csv" "$OUT/rest.csv" 2>/dev/null
# 2b. The piles at rest under a 50-sweep cap, APGD and block Gauss-Seidel side by side in one
#     run: sweeps a step, capped steps and penetration against the depth of the pile.
has depth && timeout 300 $BC bench --scene pile --sizes "$REST_SIZES" --warmup 100 --steps 20 \
    --iterations 50 --solver apgd,gauss_seidel --out "$W/depth" >"$W/depth.log" 2>&1
echo "depth exit $?" >>"$W/depth.log"
cp "$W/depth/bench.csv" "$OUT/depth.csv" 2>/dev/null
# 2c. Sweeps against depth: columns 6 grains wide, 25-200 layers, the lattice and a random
#     pack settled first (saved under the work dir), every solver, a 200-sweep cap.
has depth && timeout 300 $BC bench --scene column --layers 25,50,100,200 --pack lattice,random \
    --warmup 10 --steps 30 --iterations 200 --solver apgd,gauss_seidel,jacobi \
    --out "$W/column" >>"$W/depth.log" 2>&1
echo "column exit $?" >>"$W/depth.log"
cp "$W/column/bench.csv" "$OUT/depth_column.csv" 2>/dev/null
cat "$W/info.txt" "$W/ladder.log" "$W/rest.log" "$W/depth.log" >"$OUT/bench.log" 2>/dev/null

# 3. The default scene end to end (the Quick start's first command).
start=$(date +%s%N)
has default && timeout 60 $BC run assets/scenes/default.toml --out "$W/default" >"$OUT/default.log" 2>&1
echo "default exit $? wall $((($(date +%s%N) - start) / 1000000)) ms" >>"$OUT/default.log"
cp "$W/default/stats.csv" "$OUT/default_stats.csv" 2>/dev/null

# 4. Criterion-free bench binaries named in BENCHES (cargo bench --no-run; carry each):
#    e.g. the per-dispatch cost and the one-workgroup crossover, benches/dispatch.rs, fused.rs.
for b in ${BENCHES:-}; do
    echo "=== $b" >>"$OUT/benches.log"
    timeout 120 "$b" --bench >>"$OUT/benches.log" 2>&1
    echo "exit $?" >>"$OUT/benches.log"
done

# 5. The test suite on this adapter: every GPU stage against its CPU twin.
if [ -n "$SUITE" ] && has suite; then
    timeout 140 "$SUITE" --test-threads 16 >"$OUT/suite.log" 2>&1
    echo "suite exit $?" >>"$OUT/suite.log"
fi

echo "=== ladder"; grep -v "^$\|^stage times\|^bw_\|^pen/d" "$W/ladder.log"
echo "=== rest"; grep -v "^$\|^stage times\|^bw_\|^pen/d" "$W/rest.log"
echo "=== depth"; grep -v "^$\|^stage times\|^bw_\|^pen/d" "$W/depth.log"
echo "=== default"; tail -4 "$OUT/default.log"
[ -e "$OUT/benches.log" ] && tail -40 "$OUT/benches.log"
if [ -n "$SUITE" ] && has suite; then
    echo "=== suite"; grep -E "^test result|FAILED|panicked" "$OUT/suite.log" | head -30; tail -1 "$OUT/suite.log"
fi
