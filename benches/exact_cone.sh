#!/usr/bin/env bash
# The exact cone against the relaxed one (book: Coloured Gauss–Seidel, "The exact cone"):
# the default scene's first 240 steps (the impact phase) and the hopper's first 300, each
# with `apgd` and `gauss_seidel`, `cone = "relaxed"` and `cone = "exact"` (max_outer = 2),
# one after the other with one binary, VTK off. Prints per run the mean sweeps a step, the
# steps at the scene's cap, the worst penetration, the mean cone problems a step and the
# stepping wall time (the sum of stats.csv's wall_ms).
#   benches/exact_cone.sh [BINARY] [OUT]   (defaults: target/debug/bristlecone, out/exact_cone)
set -eu
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(realpath "${1:-$root/target/debug/bristlecone}")"
out="$(realpath -m "${2:-out/exact_cone}")"
mkdir -p "$out/scenes"
# The scenes refer to their meshes as ../meshes/…: the edited copies sit beside a link.
ln -sfn "$root/assets/meshes" "$out/meshes"
for scene in default:240 hopper:300; do
    name=${scene%%:*} steps=${scene##*:}
    for kind in apgd gauss_seidel; do
        for cone in relaxed exact; do
            run="${name}_${kind}_${cone}"
            sed -e "s/^duration = .*/steps = $steps/" -e "s/^vtk = true/vtk = false/" \
                -e "s/^kind = \"apgd\"/kind = \"$kind\"\ncone = \"$cone\"\nmax_outer = 2/" \
                "$root/assets/scenes/$name.toml" > "$out/scenes/$run.toml"
            "$bin" run "$out/scenes/$run.toml" --out "$out/$run" > "$out/$run.log" 2>&1
        done
    done
done
python3 - "$out" <<'PY'
import csv, sys, tomllib
out = sys.argv[1]
print(f"{'run':34} {'sweeps':>7} {'capped':>7} {'worst pen (m)':>14} {'cone problems':>14} {'wall (s)':>9}")
for name in ("default", "hopper"):
    for kind in ("apgd", "gauss_seidel"):
        for cone in ("relaxed", "exact"):
            run = f"{name}_{kind}_{cone}"
            cap = tomllib.load(open(f"{out}/scenes/{run}.toml", "rb"))["solver"]["max_iterations"]
            rows = list(csv.DictReader(open(f"{out}/{run}/stats.csv")))
            sweeps = [float(r["iterations"]) for r in rows]
            print(f"{run:34} {sum(sweeps) / len(sweeps):7.1f} {sum(s >= cap for s in sweeps):7d} "
                  f"{max(float(r['max_penetration']) for r in rows):14.2e} "
                  f"{sum(float(r['outer_iterations']) for r in rows) / len(rows):14.2f} "
                  f"{sum(float(r['wall_ms']) for r in rows) / 1e3:9.2f}")
PY
