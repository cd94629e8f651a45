#!/usr/bin/env bash
# Builds of the engine timed back to back on a lent GPU (book: Benchmarks, "On a real GPU"):
# every binary in BINS runs the same `bristlecone bench` arguments, one after the other, for
# ROUNDS rounds, so that a change of clock or load hits every build alike and the ratios come
# from one run. Built here, carried there with the Vulkan loader (.gl, see the device notes):
#   cargo build --release && cp target/release/bristlecone .bins/bc_new  (and older builds)
#   run: BINS=".bins/bc_old .bins/bc_new" benches/gpu_ab.sh --scene pile --sizes 10000000
#   carry: .gl, .bins
# A binary may be stored xz-compressed (NAME.xz); it is unpacked first. Per run the bench's
# table goes to $OUT/ab.log and its CSV, as NAME_ROUND.csv, into $OUT/ab_csv.tgz; the end
# prints each run's rows of the table (scene, size, solver, ms per step, stage times).
set -u
OUT=${OUT:-/tmp/gpu_ab}
BINS=${BINS:?"BINS: the binaries to compare"}
ROUNDS=${ROUNDS:-2}
LIMIT=${LIMIT:-120}
mkdir -p "$OUT"
W=/tmp/gpu_ab_work
rm -rf "$W" && mkdir -p "$W"

if ls .gl/*.deb >/dev/null 2>&1 && ! ldconfig -p | grep -q libvulkan; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -e $icd ] && export VK_DRIVER_FILES=$icd
bins=()
for b in $BINS; do
    case $b in
    *.xz) xz -dkf "$b" && b=${b%.xz} ;;
    esac
    chmod +x "$b"
    bins+=("$b")
done
"${bins[0]}" info | tee "$OUT/ab.log"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >>"$OUT/ab.log" 2>&1

for r in $(seq 1 "$ROUNDS"); do
    for b in "${bins[@]}"; do
        name=$(basename "$b")
        echo "=== round $r: $name bench $*" >>"$OUT/ab.log"
        timeout "$LIMIT" "$b" bench "$@" --out "$W/${name}_$r" >>"$OUT/ab.log" 2>&1
        echo "$name round $r exit $?" >>"$OUT/ab.log"
        cp "$W/${name}_$r/bench.csv" "$W/${name}_$r.csv" 2>/dev/null
        (cd "$W" && tar czf "$OUT/ab_csv.tgz" ./*.csv 2>/dev/null)
    done
done

# The rows of every run: the table's scene, size, solver, ms/step, then the stage columns.
grep -E "^=== round|^(pile|hopper|column) " "$OUT/ab.log"
