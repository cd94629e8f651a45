// stages: solve_reduce, solve_fused, solve_slabs_step
// Writing indirect dispatch arguments (`args`, x y z and a spare word per slot): past 65535
// workgroups the grid turns 2-D (kernels use `linear_index`).

fn set_args(slot: u32, groups: u32) {
    let x = min(groups, 65535u);
    let y = select(0u, (groups + x - 1u) / max(x, 1u), groups > 0u);
    args[slot] = x;
    args[slot + 1u] = y;
    args[slot + 2u] = select(0u, 1u, groups > 0u);
    args[slot + 3u] = 0u;
}

fn body_groups() -> u32 {
    return (params.bodies + WG - 1u) / WG;
}
