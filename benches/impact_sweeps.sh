#!/usr/bin/env bash
# The sweeps the default scene's impact needs (book: Coloured Gauss–Seidel, "The default
# scene's impact"): the scene runs 150 steps under `gauss_seidel` (its cap of 100, VTK off),
# into the impact of the poured column on the bed, and writes a checkpoint; then each of
# `apgd` and `gauss_seidel`, with the scene's friction and with every friction coefficient 0,
# continues from that checkpoint (`run --from`) for STEPS steps with a cap of 3000 sweeps, so
# that every step reaches the tolerance (10⁻⁵ m/s RMS per row). Prints per run the mean,
# least and most sweeps a step over the steps after the first (whose warm start is the
# checkpoint's), the steps at the cap, the worst penetration and the mean wall time a step.
#   benches/impact_sweeps.sh [BINARY] [OUT] [STEPS]
#   (defaults: target/release/bristlecone, out/impact_sweeps, 20)
set -eu
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(realpath "${1:-$root/target/release/bristlecone}")"
out="$(realpath -m "${2:-out/impact_sweeps}")"
steps="${3:-20}"
mkdir -p "$out/scenes"
scene="$root/assets/scenes/default.toml"
solver() {
    sed -e "s/^kind = \"apgd\"/kind = \"$1\"/" -e "s/^vtk = true/vtk = false/" "$scene"
}
solver gauss_seidel > "$out/scenes/lead_in.toml"
"$bin" run "$out/scenes/lead_in.toml" --steps 150 --out "$out/lead_in" --overwrite \
    > "$out/lead_in.log" 2>&1
for kind in apgd gauss_seidel; do
    for friction in scene none; do
        run="${kind}_${friction}"
        solver "$kind" | sed -e "s/^max_iterations = 100/max_iterations = 3000/" \
            -e "$([ "$friction" = none ] && echo 's/^friction = .*/friction = 0.0/' || echo '')" \
            > "$out/scenes/$run.toml"
        "$bin" run "$out/scenes/$run.toml" --from "$out/lead_in/checkpoint.bin" \
            --steps $((150 + steps)) --out "$out/$run" --overwrite > "$out/$run.log" 2>&1
    done
done
python3 - "$out" <<'PY'
import csv, sys
out = sys.argv[1]
print(f"{'run':22} {'mean':>7} {'least':>6} {'most':>6} {'capped':>7} {'worst pen (m)':>14} {'ms/step':>8}")
for kind in ("apgd", "gauss_seidel"):
    for friction in ("scene", "none"):
        run = f"{kind}_{friction}"
        rows = list(csv.DictReader(open(f"{out}/{run}/stats.csv")))[1:]
        sweeps = [int(r["iterations"]) for r in rows]
        ms = sum(float(r["wall_ms"]) for r in rows) / len(rows)
        pen = max(float(r["max_penetration"]) for r in rows)
        print(f"{run:22} {sum(sweeps) / len(sweeps):7.1f} {min(sweeps):6d} {max(sweeps):6d} "
              f"{sum(s >= 3000 for s in sweeps):7d} {pen:14.2e} {ms:8.0f}")
PY
