#!/usr/bin/env bash
# The whole Rust test suite with coloured Gauss–Seidel as the solver wherever a test does not
# pick one itself: built with the feature `gauss-seidel-default` (the solver of every scene
# and engine user that names none), in a scratch worktree of HEAD whose scene files that name
# `kind = "apgd"` name `kind = "gauss_seidel"` instead (the published-result scenes of
# tests/scenes.rs pin their solver). Tests that compare solvers name each one and are not
# changed. Prints each failure and the totals; the log goes to $OUT (default
# target/suite_gauss_seidel.log). Arguments go to the test binary (a filter, --skip ...).
#
#   benches/suite_gauss_seidel.sh                 # everything, as .ci/test splits it
#   benches/suite_gauss_seidel.sh periodic::      # one module
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-$root/target/suite_gauss_seidel.log}"
work="$(mktemp -d)/bristlecone"
git -C "$root" worktree add --quiet --detach "$work" HEAD
trap 'git -C "$root" worktree remove --force "$work"' EXIT
sed -i 's/^kind = "apgd"$/kind = "gauss_seidel"/' \
    "$work"/assets/scenes/*.toml "$work"/tests/fixtures/scenes/*.toml
echo "scenes switched: $(git -C "$work" diff --name-only | wc -l)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
test_suite() {
    cargo test --quiet --manifest-path "$work/Cargo.toml" --features gauss-seidel-default \
        --test suite -- "$@"
}
# As .ci/test: the compile-bound shape tests in a process with LLVM's optimisation off.
compile_bound=(cylinder_pairs:: polytope:: cylinder_patch:: capsule:: scenes::timber scenes::gravel)
{
    if [ "$#" -gt 0 ]; then
        test_suite "$@"
    else
        skips=()
        for m in "${compile_bound[@]}"; do skips+=(--skip "$m"); done
        test_suite "${skips[@]}"
        GALLIVM_PERF=nopt test_suite "${compile_bound[@]}"
    fi
} >"$out" 2>&1
grep -E " --- FAILED$|^test .* FAILED$|^test result" "$out"
echo "log: $out"
