// Collision, grain-grain: candidate pairs from the 27 neighbouring cells of the hashed grid,
// fused with the sphere-sphere narrow phase (no candidate-pair buffer is stored).
// count     (`detect` dispatched with z = 1): per grain i (A = body nb + i; threads take
//           grains in slot order), the number of contacts with grains j > i with gap <=
//           envelope -> offs[nb*ng + i]. Sphere pairs give one; shaped pairs a manifold.
// (host)    exclusive scan of offs (walls' rows first, see collide_walls.wgsl).
// (grid)    collide_grid::finalize: contact count, overflow flag, needed size, indirect args.
// write     (z = 2): the same loop writes the contacts at offs[nb*ng + i] + k, then sorts
//           the row by (body B, feature) (insertion sort for short rows, heap sort for long),
//           so the list is sorted by (A, B, feature). Sphere-only scenes: the loop notes the
//           B ids, they are sorted, and each record is written once, in order
//           (`write_sphere_row`); the same list, bit for bit.
// Each unordered pair is found exactly once: j > i, and a found j must lie in the very cell
// being visited (two neighbour cells may hash to the same slot). Large grains (slot T, see
// collide_grid.wgsl) are tested by every small grain after its cells, and test every grain
// of higher index themselves, in index order.

@group(0) @binding(0) var<uniform> params: CollideParams;
@group(0) @binding(1) var<storage, read> rot: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> sorted_pos: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> sorted_idx: array<u32>;
@group(0) @binding(4) var<storage, read> starts: array<u32>;
@group(0) @binding(5) var<storage, read> info: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read> materials: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> offs: array<u32>;
@group(0) @binding(8) var<storage, read_write> contacts: array<Contact>; // chunked(4)
// 4 vec4 per shape (src/collide/mod.rs, `shape_records`); box grains: [0].xyz = half extents;
// capsule grains: [0].xy = radius, half length.
@group(0) @binding(9) var<storage, read> shapes: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read> pos: array<vec4<f32>>;
// The CSR entries' buffer (collide_csr rewrites it after this stage): the write pass of a
// sphere-only scene keeps each row's B ids there (see `write_sphere_row`).
@group(0) @binding(11) var<storage, read_write> body_entries: array<u32>;

// Wrapped grid: the T = 2^m slots form a periodic 2^bx x 2^by x 2^bz lattice of cells, so
// neighbouring cells get neighbouring slots (memory locality) and any cell, however far away,
// has a slot; cells that alias share a slot and are told apart by their coordinates.
fn sphere_gap(pi: vec4<f32>, pj: vec4<f32>) -> f32 {
    let d = pj.xyz - pi.xyz;
    return sqrt(dot(d, d)) - pi.w - pj.w;
}

fn pair_contact(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>) -> Contact {
    let ma = info[bi].y;
    return pair_contact_from(bi, ma, materials[ma].x, bj, pi, pj);
}

// `pair_contact` with A's material (ma) and friction (mua) already read.
fn pair_contact_from(bi: u32, ma: u32, mua: f32, bj: u32, pi: vec4<f32>, pj: vec4<f32>) -> Contact {
    // The partner's nearest image (itself unless the cell is periodic): the sphere-only write
    // pass passes the stored position.
    let d = nearest_image(pi.xyz, pj.xyz) - pi.xyz;
    let dist = sqrt(dot(d, d));
    let gap = dist - pi.w - pj.w;
    var n = vec3<f32>(0.0, 0.0, 1.0);
    if dist > 0.0 {
        n = d / dist;
    }
    let ra = n * (pi.w + 0.5 * gap);
    let rb = ra - d;
    let mb = info[bj].y;
    let mu = min(mua, materials[mb].x);
    var c: Contact;
    c.n_gap = vec4<f32>(n, gap);
    c.ra = vec4<f32>(ra, mu);
    c.rb = vec4<f32>(rb, image_flow_speed(pi.xyz + d, pos[bj].xyz));
    c.ids = vec4<u32>(bi, bj, 0u, (ma << 16u) | (mb & 0xffffu));
    return c;
}

fn grain_obb(b: u32, p: vec4<f32>) -> Obb {
    return make_obb(p.xyz, rot[b], shapes[4u * info[b].w].xyz);
}

// Pairs with a box: the manifold (normal from bi to bj).
fn box_pair(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>) -> Manifold {
    let env = params.envelope;
    let ki = info[bi].z;
    let kj = info[bj].z;
    if ki == SHAPE_BOX && kj == SHAPE_BOX {
        return box_box(grain_obb(bi, pi), grain_obb(bj, pj), env);
    }
    if ki == SHAPE_BOX {
        return sphere_box(pj.xyz, pj.w, grain_obb(bi, pi), env);
    }
    var m = sphere_box(pi.xyz, pi.w, grain_obb(bj, pj), env);
    m.n = -m.n;
    return m;
}

// Writes the manifold's contacts from `at` (capacity-checked); returns their number.
fn write_manifold(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>, m: Manifold, write: bool, at: u32) -> u32 {
    if !write {
        return m.count;
    }
    let ma = info[bi].y;
    let mb = info[bj].y;
    let mu = min(materials[ma].x, materials[mb].x);
    for (var k = 0u; k < m.count; k++) {
        if at + k < params.contact_capacity {
            let pk = manifold_point(m, k);
            let p = pk.xyz;
            var c: Contact;
            c.n_gap = vec4<f32>(m.n, pk.w);
            c.ra = vec4<f32>(p - pi.xyz, mu);
            c.rb = vec4<f32>(p - pj.xyz, 0.0);
            c.ids = vec4<u32>(bi, bj, manifold_feature(m, k), (ma << 16u) | (mb & 0xffffu));
            contacts_put(at + k, c);
        }
    }
    return m.count;
}

// A box pair's manifold with its patch (book: Contact patches) when the pair has a patch model and the
// manifold is face–face: the points keep only their normal rows (μ = 0), the patch record
// follows them (feature PATCH_FEATURE sorts last in the pair).
fn write_manifold_or_patch(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>, m: Manifold, write: bool, at: u32) -> u32 {
    if HAS_PATCHES && (materials[info[bi].y].y != 0.0 || materials[info[bj].y].y != 0.0) {
        let g = patch_geom(m);
        if g.ok {
            if write {
                let ma = info[bi].y;
                let mb = info[bj].y;
                let mu = min(materials[ma].x, materials[mb].x);
                for (var k = 0u; k <= m.count; k++) {
                    if at + k < params.contact_capacity {
                        var c: Contact;
                        if k == m.count {
                            c = patch_record(bi, bj, m.n, g, pi.xyz, pj.xyz, mu, (ma << 16u) | (mb & 0xffffu), patch_feature(materials[ma].y, materials[mb].y));
                        } else {
                            let p = m.p[k].xyz;
                            c.n_gap = vec4<f32>(m.n, m.p[k].w);
                            c.ra = vec4<f32>(p - pi.xyz, 0.0);
                            c.rb = vec4<f32>(p - pj.xyz, 0.0);
                            c.ids = vec4<u32>(bi, bj, m.f[k], (ma << 16u) | (mb & 0xffffu));
                        }
                        contacts_put(at + k, c);
                    }
                }
            }
            return m.count + 1u;
        }
    }
    return write_manifold(bi, bj, pi, pj, m, write, at);
}

// capsule:begin
// ---------------------------------------------------------------- capsule pairs
fn grain_capsule(b: u32, p: vec4<f32>) -> Capsule {
    return make_capsule(p.xyz, rot[b], shapes[4u * info[b].w]);
}

// Pairs with a capsule (common/collide_capsule.wgsl): normals from bi to bj.
fn capsule_pair(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>) -> CapContacts {
    let env = params.envelope;
    let first = info[bi].z == SHAPE_CAPSULE;
    let c = select(bj, bi, first);
    let o = select(bi, bj, first);
    let pc = select(pj, pi, first);
    let po = select(pi, pj, first);
    let ko = info[o].z;
    let cap = grain_capsule(c, pc);
    // Normals from the capsule to the other; flipped when the capsule is bj.
    var flip = !first;
    var m: CapContacts;
    if ko == SHAPE_CAPSULE {
        m = capsule_capsule(cap, grain_capsule(o, po), env);
    } else if HAS_BOXES && ko == SHAPE_BOX {
        m = capsule_box(cap, grain_obb(o, po), env);
        flip = !flip;
    } else {
        m = capsule_sphere(cap, po.xyz, po.w, env);
    }
    if flip {
        // Both slots (an unused one is never read): fixed indices, see cap_push.
        m.n[0] = -m.n[0];
        m.n[1] = -m.n[1];
    }
    return m;
}

fn write_capsule(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>, m: CapContacts, write: bool, at: u32) -> u32 {
    if !write {
        return m.count;
    }
    let ma = info[bi].y;
    let mb = info[bj].y;
    let mu = min(materials[ma].x, materials[mb].x);
    for (var k = 0u; k < m.count; k++) {
        if at + k < params.contact_capacity {
            let second = k == 1u;
            let pk = select(m.p[0], m.p[1], second);
            let p = pk.xyz;
            var c: Contact;
            c.n_gap = vec4<f32>(select(m.n[0], m.n[1], second), pk.w);
            c.ra = vec4<f32>(p - pi.xyz, mu);
            c.rb = vec4<f32>(p - pj.xyz, 0.0);
            c.ids = vec4<u32>(bi, bj, select(m.f[0], m.f[1], second), (ma << 16u) | (mb & 0xffffu));
            contacts_put(at + k, c);
        }
    }
    return m.count;
}
// capsule:end

// convex:begin
// ---------------------------------------------------------------- convex hull grains
// Twin: src/reference/convex.rs. Sphere–hull; hull–hull and hull–box by polytope_pair
// (common/collide_polytope.wgsl); clump members against a hull in the clump section. Record at
// shapes[4 * shape index], see common/collide_convex.wgsl.
// Closest point of face f's polygon (local frame) to x, which lies above its plane.
fn hull_face_closest(rec: vec4<u32>, f: u32, x: vec3<f32>) -> vec3<f32> {
    let pl = shapes[rec.w + f];
    let hd = bitcast<vec2<u32>>(shapes[rec.w + rec.y + f].xy);
    let lw = 4u * (rec.w + 2u * rec.y);
    let proj = x - pl.xyz * (dot(pl.xyz, x) - pl.w);
    var inside = true;
    var best = proj;
    var bd = 3.0e38;
    for (var k = 0u; k < hd.y; k++) {
        let a = shapes[rec.z + hull_word(lw + hd.x + k)].xyz;
        let b = shapes[rec.z + hull_word(lw + hd.x + (k + 1u) % hd.y)].xyz;
        if dot(cross(b - a, proj - a), pl.xyz) < 0.0 {
            inside = false;
        }
        let q = hull_seg_closest(a, b, x);
        let d = dot(x - q, x - q);
        if d < bd {
            bd = d;
            best = q;
        }
    }
    if inside {
        return proj;
    }
    return best;
}

// Sphere (centre cs, radius r) against hull grain h: normal from the hull to the sphere.
fn sphere_hull(cs: vec3<f32>, r: f32, h: u32, ph: vec4<f32>, env: f32) -> Manifold {
    var m: Manifold;
    m.count = 0u;
    let rec = bitcast<vec4<u32>>(shapes[4u * info[h].w]);
    let q = rot[h];
    let cl = quat_rotate_inv(q, cs - ph.xyz);
    var smax = -3.0e38;
    var fmax = 0u;
    for (var f = 0u; f < rec.y; f++) {
        let pl = shapes[rec.w + f];
        let s = dot(pl.xyz, cl) - pl.w;
        if s > smax {
            smax = s;
            fmax = f;
        }
    }
    if smax - r > env {
        return m;
    }
    var nl = shapes[rec.w + fmax].xyz;
    var ql = cl - nl * smax;
    var gap = smax - r;
    if smax > 0.0 {
        var bd = 3.0e38;
        for (var f = 0u; f < rec.y; f++) {
            let pl = shapes[rec.w + f];
            if dot(pl.xyz, cl) - pl.w <= 0.0 {
                continue;
            }
            let c = hull_face_closest(rec, f, cl);
            let d = dot(cl - c, cl - c);
            if d < bd {
                bd = d;
                ql = c;
            }
        }
        let dist = sqrt(bd);
        nl = (cl - ql) / dist;
        gap = dist - r;
    }
    if gap > env {
        return m;
    }
    m.n = quat_rotate(q, nl);
    manifold_push(&m, ph.xyz + quat_rotate(q, ql) + m.n * (0.5 * gap), gap, 0u);
    return m;
}

// A pair of a hull and a sphere, capsule, hull or box (normal from bi to bj).
fn convex_pair(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>) -> Manifold {
    let env = params.envelope;
    let ki = info[bi].z;
    let kj = info[bj].z;
    // polytope:begin
    if (ki == SHAPE_CONVEX || ki == SHAPE_BOX) && (kj == SHAPE_CONVEX || kj == SHAPE_BOX) {
        return polytope_pair(bi, bj, pi, pj);
    }
    // polytope:end
    // capsulehull:begin
    if ki == SHAPE_CAPSULE {
        var m = capsule_hull(bi, pi, bj, pj, env);
        m.n = -m.n;
        return m;
    }
    if kj == SHAPE_CAPSULE {
        return capsule_hull(bj, pj, bi, pi, env);
    }
    // capsulehull:end
    if ki == SHAPE_CONVEX {
        return sphere_hull(pj.xyz, pj.w, bi, pi, env);
    }
    var m = sphere_hull(pi.xyz, pi.w, bj, pj, env);
    m.n = -m.n;
    return m;
}

// convex:end

// ---------------------------------------------------------------- clumps
// f64 twin: src/reference/clumps.rs. A clump's members are spheres of the sphere narrow
// phase; contacts go to the clump body (lever arms from its centre of mass). Features:
// (member of A << 8) | member of B (a sphere is member 0); a member against a box: the
// member index. Members of one body are never paired (a body is never paired with itself).

// Shape record of a clump: [0] = (member count, first member's vec4 index) as u32 bits.
fn member_count(b: u32) -> u32 {
    if info[b].z == SHAPE_CLUMP {
        return bitcast<u32>(shapes[4u * info[b].w].x);
    }
    return 1u;
}

// Member k of grain b in world (centre, radius); a sphere is its own member 0.
fn member(b: u32, p: vec4<f32>, k: u32) -> vec4<f32> {
    if info[b].z != SHAPE_CLUMP {
        return p;
    }
    let m = shapes[bitcast<u32>(shapes[4u * info[b].w].y) + k];
    return vec4<f32>(p.xyz + quat_rotate(rot[b], m.xyz), m.w);
}

fn clump_contact(at: u32, bi: u32, bj: u32, x: vec3<f32>, y: vec3<f32>, n: vec3<f32>, p: vec3<f32>, gap: f32, f: u32) {
    if at >= params.contact_capacity {
        return;
    }
    let ma = info[bi].y;
    let mb = info[bj].y;
    var c: Contact;
    c.n_gap = vec4<f32>(n, gap);
    c.ra = vec4<f32>(p - x, min(materials[ma].x, materials[mb].x));
    c.rb = vec4<f32>(p - y, 0.0);
    c.ids = vec4<u32>(bi, bj, f, (ma << 16u) | (mb & 0xffffu));
    contacts_put(at, c);
}

// capsule:begin
// Members of clump c against capsule grain bi or bj (the other): capsule–sphere, normal
// from the capsule to the member, flipped to run from bi to bj; feature = member index.
fn clump_capsule(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>, write: bool, at: u32) -> u32 {
    let a_cap = info[bi].z == SHAPE_CAPSULE;
    let c = select(bi, bj, a_cap);
    let pc = select(pi, pj, a_cap);
    let cap = grain_capsule(select(bj, bi, a_cap), select(pj, pi, a_cap));
    let sign = select(-1.0, 1.0, a_cap);
    var n = 0u;
    for (var k = 0u; k < member_count(c); k++) {
        let s = member(c, pc, k);
        let m = capsule_sphere(cap, s.xyz, s.w, params.envelope);
        if m.count > 0u {
            if write {
                clump_contact(at + n, bi, bj, pi.xyz, pj.xyz, m.n[0] * sign, m.p[0].xyz, m.p[0].w, k);
            }
            n += 1u;
        }
    }
    return n;
}
// capsule:end

// convex:begin
// Members of clump c against hull grain bi or bj (sphere–hull, normal from the hull to the
// member, turned to run from bi to bj); feature = member index.
fn clump_hull(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>, write: bool, at: u32) -> u32 {
    let a_hull = info[bi].z == SHAPE_CONVEX;
    let c = select(bi, bj, a_hull);
    let pc = select(pi, pj, a_hull);
    let sign = select(-1.0, 1.0, a_hull);
    var n = 0u;
    for (var k = 0u; k < member_count(c); k++) {
        let s = member(c, pc, k);
        let m = sphere_hull(s.xyz, s.w, select(bj, bi, a_hull), select(pj, pi, a_hull), params.envelope);
        if m.count > 0u {
            if write {
                clump_contact(at + n, bi, bj, pi.xyz, pj.xyz, m.n * sign, m.p[0].xyz, m.p[0].w, k);
            }
            n += 1u;
        }
    }
    return n;
}
// convex:end

// cylinder:begin
// Members of clump c against cylinder grain bi or bj (cylinder–sphere, as clump_hull).
fn clump_cylinder(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>, write: bool, at: u32) -> u32 {
    let a_cyl = info[bi].z == SHAPE_CYLINDER;
    let c = select(bi, bj, a_cyl);
    let pc = select(pi, pj, a_cyl);
    let y = select(bj, bi, a_cyl);
    let cy = make_cylinder(select(pj, pi, a_cyl).xyz, rot[y], shapes[4u * info[y].w]);
    let sign = select(-1.0, 1.0, a_cyl);
    var n = 0u;
    for (var k = 0u; k < member_count(c); k++) {
        let s = member(c, pc, k);
        let m = cylinder_sphere(cy, s.xyz, s.w, params.envelope);
        if m.count > 0u {
            if write {
                clump_contact(at + n, bi, bj, pi.xyz, pj.xyz, m.n[0] * sign, m.p[0].xyz, m.p[0].w, k);
            }
            n += 1u;
        }
    }
    return n;
}
// cylinder:end

// Grains bi < bj, one at least a clump: member pairs (or members against a box, capsule,
// hull or cylinder).
fn clump_pair(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>, write: bool, at: u32) -> u32 {
    let env = params.envelope;
    var n = 0u;
    // capsule:begin
    if HAS_CAPSULES && (info[bi].z == SHAPE_CAPSULE || info[bj].z == SHAPE_CAPSULE) {
        return clump_capsule(bi, bj, pi, pj, write, at);
    }
    // capsule:end
    // convex:begin
    if HAS_CONVEX && (info[bi].z == SHAPE_CONVEX || info[bj].z == SHAPE_CONVEX) {
        return clump_hull(bi, bj, pi, pj, write, at);
    }
    // convex:end
    // cylinder:begin
    if HAS_CYLINDERS && (info[bi].z == SHAPE_CYLINDER || info[bj].z == SHAPE_CYLINDER) {
        return clump_cylinder(bi, bj, pi, pj, write, at);
    }
    // cylinder:end
    if HAS_BOXES && (info[bi].z == SHAPE_BOX || info[bj].z == SHAPE_BOX) {
        let a_box = info[bi].z == SHAPE_BOX;
        let c = select(bi, bj, a_box);
        let pc = select(pi, pj, a_box);
        let x = select(bj, bi, a_box);
        let obb = grain_obb(x, select(pj, pi, a_box));
        let sign = select(-1.0, 1.0, a_box);
        for (var k = 0u; k < member_count(c); k++) {
            let s = member(c, pc, k);
            let m = sphere_box(s.xyz, s.w, obb, env);
            if m.count > 0u {
                if write {
                    clump_contact(at + n, bi, bj, pi.xyz, pj.xyz, m.n * sign, m.p[0].xyz, m.p[0].w, k);
                }
                n += 1u;
            }
        }
        return n;
    }
    let na = member_count(bi);
    let nbm = member_count(bj);
    for (var a = 0u; a < na; a++) {
        let sa = member(bi, pi, a);
        for (var b = 0u; b < nbm; b++) {
            let sb = member(bj, pj, b);
            let d = sb.xyz - sa.xyz;
            let dist = sqrt(dot(d, d));
            let gap = dist - sa.w - sb.w;
            if gap > env {
                continue;
            }
            if write {
                var nrm = vec3<f32>(0.0, 0.0, 1.0);
                if dist > 0.0 {
                    nrm = d / dist;
                }
                let p = sa.xyz + nrm * (sa.w + 0.5 * gap);
                clump_contact(at + n, bi, bj, pi.xyz, pj.xyz, nrm, p, gap, (a << 8u) | b);
            }
            n += 1u;
        }
    }
    return n;
}

// cylinder:begin
// ---------------------------------------------------------------- cylinder pairs
// A cylinder and a sphere (common/collide_cylinder.wgsl), or a box, hull, capsule or
// cylinder (common/collide_support.wgsl; with two cylinders, bi is C): normal from bi to bj.
fn cylinder_pair(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>, write: bool, at: u32) -> u32 {
    let first = info[bi].z == SHAPE_CYLINDER;
    let c = select(bj, bi, first);
    let pc = select(pj, pi, first);
    let ps = select(pi, pj, first);
    let x = select(bi, bj, first);
    // cylpair:begin
    if info[x].z != SHAPE_SPHERE {
        let mc = cylinder_convex(grain_sup(c, pc), grain_sup(x, ps), params.envelope);
        return write_cyl_contacts(bi, bj, pi, pj, mc, !first, write, at);
    }
    // cylpair:end
    let m = cylinder_sphere(make_cylinder(pc.xyz, rot[c], shapes[4u * info[c].w]), ps.xyz, ps.w, params.envelope);
    return write_cyl_contacts(bi, bj, pi, pj, m, !first, write, at);
}

// Writes a cylinder pair's contacts (features ascend), normals flipped when `flip`.
fn write_cyl_contacts(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>, m: CylContacts, flip: bool, write: bool, at: u32) -> u32 {
    if !write {
        return m.count;
    }
    let ma = info[bi].y;
    let mb = info[bj].y;
    let mu = min(materials[ma].x, materials[mb].x);
    for (var k = 0u; k < m.count; k++) {
        if at + k >= params.contact_capacity {
            break;
        }
        let p = m.p[k].xyz;
        var ct: Contact;
        ct.n_gap = vec4<f32>(select(m.n[k], -m.n[k], flip), m.p[k].w);
        ct.ra = vec4<f32>(p - pi.xyz, mu);
        ct.rb = vec4<f32>(p - pj.xyz, 0.0);
        ct.ids = vec4<u32>(bi, bj, m.f[k], (ma << 16u) | (mb & 0xffffu));
        contacts_put(at + k, ct);
    }
    return m.count;
}
// cylinder:end

// A grain shape's narrow-phase routine, ranked: a pair runs the higher of its two shapes'
// routines (the table `crate::shapes::Routine` and each family's `routine` give; checked by
// `step::shared_ids`). A new grain shape adds its case here.
const ROUTINE_SPHERE: u32 = 0u;
const ROUTINE_BOX: u32 = 1u;
const ROUTINE_CAPSULE: u32 = 2u;
const ROUTINE_CONVEX: u32 = 3u;
const ROUTINE_CYLINDER: u32 = 4u;
const ROUTINE_CLUMP: u32 = 5u;

fn grain_routine(kind: u32) -> u32 {
    switch kind {
        case SHAPE_BOX: { return ROUTINE_BOX; }
        case SHAPE_CAPSULE: { return ROUTINE_CAPSULE; }
        case SHAPE_CONVEX: { return ROUTINE_CONVEX; }
        case SHAPE_CYLINDER: { return ROUTINE_CYLINDER; }
        case SHAPE_CLUMP: { return ROUTINE_CLUMP; }
        default: { return ROUTINE_SPHERE; }
    }
}

// The contacts of grains i and j (gap of the bounding spheres within the envelope): one
// for two spheres, else the pair routine's manifold; written from `at` when `write`. The
// `HAS_*` guards let the driver drop the routines a scene has no shape for.
fn pair(i: u32, j: u32, pi: vec4<f32>, pj: vec4<f32>, write: bool, at: u32) -> u32 {
    let nb = params.boundaries;
    let bi = nb + i;
    let bj = nb + j;
    var routine = ROUTINE_SPHERE;
    if HAS_BOXES || HAS_CAPSULES || HAS_CYLINDERS || HAS_CLUMPS || HAS_CONVEX {
        routine = max(grain_routine(info[bi].z), grain_routine(info[bj].z));
    }
    switch routine {
        case ROUTINE_CLUMP: {
            if HAS_CLUMPS {
                return clump_pair(bi, bj, pi, pj, write, at);
            }
        }
        case ROUTINE_CYLINDER: {
            // cylinder:begin
            if HAS_CYLINDERS {
                return cylinder_pair(bi, bj, pi, pj, write, at);
            }
            // cylinder:end
        }
        case ROUTINE_CONVEX: {
            // convex:begin
            if HAS_CONVEX {
                return write_manifold(bi, bj, pi, pj, convex_pair(bi, bj, pi, pj), write, at);
            }
            // convex:end
        }
        case ROUTINE_CAPSULE: {
            // capsule:begin
            if HAS_CAPSULES {
                let m = capsule_pair(bi, bj, pi, pj);
                return write_capsule(bi, bj, pi, pj, m, write, at);
            }
            // capsule:end
        }
        case ROUTINE_BOX: {
            if HAS_BOXES {
                let m = box_pair(bi, bj, pi, pj);
                return write_manifold_or_patch(bi, bj, pi, pj, m, write, at);
            }
        }
        default: {
            if write && at < params.contact_capacity {
                contacts_put(at, pair_contact(bi, bj, pi, pj));
            }
            return 1u;
        }
    }
    return 0u;
}

// Only sphere grains: the visit then never calls the pair narrow phase (a sphere pair is one
// contact; the write pass notes B ids and writes each record once, at its rank), so neither
// pass carries the 64 B record writes inside its loops (lavapipe runs masked-off code too).
fn spheres_only() -> bool {
    return !(HAS_BOXES || HAS_CAPSULES || HAS_CYLINDERS || HAS_CLUMPS || HAS_CONVEX);
}

// Sphere-only scenes: grain i's partners, in the order of `walk_next`, each counted and, when
// `keys`, its B id noted in body_entries from `base`. With nothing to compile per pair, the
// walk's state machine (which exists to keep the narrow phase at one call site) buys nothing
// here and costs a branch on its phase per grain passed: the scans are plain loops (the
// pair stage of a 3000-sphere pile on lavapipe: `bristlecone bench --scene pile`).
fn visit_spheres(i: u32, pi: vec4<f32>, keys: bool, base: u32) -> u32 {
    let env = params.envelope;
    if pi.w > params.large_radius {
        // A large grain: every grain j > i, in index order.
        let nb = params.boundaries;
        var n = 0u;
        for (var j = i + 1u; j < params.grains; j++) {
            if sphere_gap(pi, image_of(pi, pos[nb + j])) <= env && !(PARKING && info[nb + j].x == MOTION_PARKED) {
                n += note_partner(j, keys, base + n);
            }
        }
        return n;
    }
    var n = 0u;
    if PERIODIC {
        let seams = seam_shift(pi.xyz, params.cell_size);
        for (var s = 0u; s < 8u; s++) {
            let t = image_shift(pi.xyz, seams, s, params.cell_size);
            if t.w != 0.0 {
                n += visit_sphere_cells(i, vec4<f32>(pi.xyz + t.xyz, pi.w), keys, base + n);
            }
        }
    } else {
        n = visit_sphere_cells(i, pi, keys, base);
    }
    for (var k = starts[params.table_size]; k < starts[params.table_size + 1u]; k++) {
        let j = sorted_idx[k];
        if j > i && sphere_gap(pi, image_of(pi, sorted_pos[k])) <= env {
            n += note_partner(j, keys, base + n);
        }
    }
    return n;
}

// `visit_spheres` in the 27 cells around pc, an image of grain i.
fn visit_sphere_cells(i: u32, pc: vec4<f32>, keys: bool, base: u32) -> u32 {
    let c = cell_of(pc.xyz);
    let env = params.envelope;
    var n = 0u;
    for (var row = 0u; row < 9u; row++) {
        let r = cell_row(c + vec3<i32>(-1, i32(row % 3u) - 1, i32(row / 3u) - 1));
        for (var q = 0u; q < r.total; q++) {
            let k = row_slot(r, q);
            let j = sorted_idx[k];
            let pj = sorted_pos[k];
            if j > i && sphere_gap(pc, pj) <= env && row_holds(r, q, pj) {
                n += note_partner(j, keys, base + n);
            }
        }
    }
    return n;
}

fn note_partner(j: u32, keys: bool, at: u32) -> u32 {
    if keys && at < params.contact_capacity {
        body_entries[at] = j;
    }
    return 1u;
}

// The partners of grain i, one per call of `walk_next`, in the visit's order. A small grain
// i: each grain j > i within its envelope in the 27 cells around it (in a periodic cell, also
// around each image of i beyond the seams it lies near, common/collide_periodic.wgsl: a
// partner found there is passed as its image near i), then the large grains. A large grain
// i: every grain j > i, in index order (its row then comes out sorted by B).
//
// The visit calls the narrow phase (`pair`) from one place, once per partner: NIR inlines
// every call of a function, so each call site of `pair` is another copy of every narrow
// phase of the scene's shapes for LLVM to compile (on lavapipe the shape-rich stages spend
// minutes in LLVM, superlinear in the function's size). The scans between two partners run
// in `walk_next`'s own loop: a SIMD group runs a loop as often as its busiest lane needs, so
// the narrow phase runs once per pair found, not once per grain passed.
struct Walk {
    // WALK_ROWS, WALK_LARGE, WALK_INDEX or WALK_DONE.
    phase: u32,
    // Rows: the image (0..7, bits pick seam shifts; 0 is i itself), its seam shifts and
    // offset t, the row (dz, dy as 3 (dz + 1) + dy + 1) and its leftmost cell.
    image: u32,
    seams: vec3<f32>,
    t: vec3<f32>,
    row: u32,
    // The row of cells x − 1, x, x + 1 and the position q in it.
    cells: CellRow,
    q: u32,
    // Large grains: slot k of the large grains' cell; index order: the next j.
    k: u32,
    // The partner found by the last `walk_next` and its image near i.
    j: u32,
    pj: vec4<f32>,
}

const WALK_ROWS: u32 = 0u;
const WALK_LARGE: u32 = 1u;
const WALK_INDEX: u32 = 2u;
const WALK_DONE: u32 = 3u;

fn walk_start(i: u32, pi: vec4<f32>) -> Walk {
    var w: Walk;
    w.j = 0u;
    w.pj = vec4<f32>(0.0);
    if pi.w > params.large_radius {
        w.phase = WALK_INDEX;
        w.k = i + 1u;
        return w;
    }
    w.phase = WALK_ROWS;
    w.image = 0u;
    w.seams = vec3<f32>(0.0);
    if PERIODIC {
        w.seams = seam_shift(pi.xyz, params.cell_size);
    }
    w.t = vec3<f32>(0.0);
    walk_row(&w, pi, 0u);
    return w;
}

// Sets the walk on row `row` of the 27 cells around the current image of i.
fn walk_row(w: ptr<function, Walk>, pi: vec4<f32>, row: u32) {
    let dy = i32(row % 3u) - 1;
    let dz = i32(row / 3u) - 1;
    (*w).row = row;
    (*w).cells = cell_row(cell_of(pi.xyz + (*w).t) + vec3<i32>(-1, dy, dz));
    (*w).q = 0u;
}

// The row of cells cl, cl + x, cl + 2 x as one concatenation of their slot ranges.
struct CellRow {
    // The leftmost cell.
    cl: vec3<i32>,
    // The ranges' starts, the ends of the first one and two ranges in the concatenation,
    // its total length, and whether the three are one range.
    a: vec3<u32>,
    l0: u32,
    l1: u32,
    total: u32,
    straight: bool,
}

fn cell_row(cl: vec3<i32>) -> CellRow {
    let s = vec3<u32>(cell_hash(cl), cell_hash(cl + vec3<i32>(1, 0, 0)), cell_hash(cl + vec3<i32>(2, 0, 0)));
    // The three cells' slots are consecutive unless the row crosses a period of the lattice
    // or the table's end (cell_hash): then their ranges are one, read with two loads instead
    // of six (on lavapipe each load is a loop over the SIMD lanes), and a grain found there is
    // the row's if its cell is one of the three (each has its own slot, so none is visited
    // twice). The pairs and their order are the same.
    let straight = s.y == s.x + 1u && s.z == s.x + 2u;
    var a = vec3<u32>(starts[s.x], 0u, 0u);
    var e = vec3<u32>(0u);
    if straight {
        e.x = starts[s.x + 3u];
    } else {
        a = vec3<u32>(a.x, starts[s.y], starts[s.z]);
        e = vec3<u32>(starts[s.x + 1u], starts[s.y + 1u], starts[s.z + 1u]);
    }
    let l0 = e.x - a.x;
    let l1 = select(l0 + e.y - a.y, l0, straight);
    let total = select(l1 + e.z - a.z, l0, straight);
    return CellRow(cl, a, l0, l1, total, straight);
}

// The slot of position q < total in the row's concatenation.
fn row_slot(r: CellRow, q: u32) -> u32 {
    return select(select(r.a.z + (q - r.l1), r.a.y + (q - r.l0), q < r.l1), r.a.x + q, q < r.l0);
}

// Whether grain position pj, read at position q of the row, lies in the row's cell for q.
fn row_holds(r: CellRow, q: u32, pj: vec4<f32>) -> bool {
    let dx = select(select(2, 1, q < r.l1), 0, q < r.l0);
    let d = cell_of(pj.xyz) - r.cl;
    return all(d.yz == vec2<i32>(0)) && select(d.x == dx, d.x >= 0 && d.x <= 2, r.straight);
}

// After the last row of an image: the next image of i that is visited (periodic cells), else
// the large grains.
fn walk_next_image(w: ptr<function, Walk>, pi: vec4<f32>) {
    if PERIODIC {
        for (var s = (*w).image + 1u; s < 8u; s++) {
            let t = image_shift(pi.xyz, (*w).seams, s, params.cell_size);
            if t.w != 0.0 {
                (*w).image = s;
                (*w).t = t.xyz;
                walk_row(w, pi, 0u);
                return;
            }
        }
    }
    (*w).phase = WALK_LARGE;
    (*w).k = starts[params.table_size];
}

// Moves the walk to grain i's next partner (`j`, `pj`), or to WALK_DONE.
fn walk_next(w: ptr<function, Walk>, i: u32, pi: vec4<f32>) {
    let env = params.envelope;
    loop {
        if (*w).phase == WALK_ROWS {
            let q = (*w).q;
            let r = (*w).cells;
            if q >= r.total {
                if (*w).row == 8u {
                    walk_next_image(w, pi);
                } else {
                    walk_row(w, pi, (*w).row + 1u);
                }
                continue;
            }
            (*w).q = q + 1u;
            let k = row_slot(r, q);
            let j = sorted_idx[k];
            let pj = sorted_pos[k];
            if j > i && sphere_gap(vec4<f32>(pi.xyz + (*w).t, pi.w), pj) <= env && row_holds(r, q, pj) {
                (*w).j = j;
                (*w).pj = vec4<f32>(pj.xyz - (*w).t, pj.w);
                return;
            }
        } else if (*w).phase == WALK_LARGE {
            let k = (*w).k;
            if k >= starts[params.table_size + 1u] {
                (*w).phase = WALK_DONE;
                return;
            }
            (*w).k = k + 1u;
            let j = sorted_idx[k];
            let pj = image_of(pi, sorted_pos[k]);
            if j > i && sphere_gap(pi, pj) <= env {
                (*w).j = j;
                (*w).pj = pj;
                return;
            }
        } else if (*w).phase == WALK_INDEX {
            let j = (*w).k;
            if j >= params.grains {
                (*w).phase = WALK_DONE;
                return;
            }
            (*w).k = j + 1u;
            let nb = params.boundaries;
            let pj = image_of(pi, pos[nb + j]);
            if sphere_gap(pi, pj) <= env && !(PARKING && info[nb + j].x == MOTION_PARKED) {
                (*w).j = j;
                (*w).pj = pj;
                return;
            }
        } else {
            return;
        }
    }
}

// Grain position pj moved to its image nearest to pi (radius kept).
fn image_of(pi: vec4<f32>, pj: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(nearest_image(pi.xyz, pj.xyz), pj.w);
}

// Every partner of grain i (`walk_next`), each passed to the pair narrow phase, which writes
// its contacts from `base` when `write`; how many contacts that found.
fn visit_any(i: u32, pi: vec4<f32>, write: bool, base: u32) -> u32 {
    var w = walk_start(i, pi);
    var n = 0u;
    loop {
        walk_next(&w, i, pi);
        if w.phase == WALK_DONE {
            break;
        }
        n += pair(i, w.j, pi, w.pj, write, base + n);
    }
    return n;
}

// One entry point for both passes, so that the narrow phase is compiled once (lavapipe
// builds every pipeline from scratch: two entry points compiled the hull and cylinder code
// twice, minutes on 2 cores). The dispatch's z size names the pass: 1 counts, 2 writes
// (the grains split between the two layers: lavapipe hands each core a contiguous run of
// workgroups, so an idle layer would leave one core idle).
@compute @workgroup_size(256)
fn detect(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let write = nwg.z == 2u;
    let t = layered_index(gid, nwg);
    let nb = params.boundaries;
    let ng = params.grains;
    if !write && t == 0u {
        offs[(nb + 1u) * ng] = 0u;
    }
    if t >= ng {
        return;
    }
    // Threads walk the grains in slot order (neighbouring threads, neighbouring cells).
    let i = sorted_idx[t];
    // A parked grain has no contacts (no grain finds it either: it is in slot T + 1).
    if PARKING && info[nb + i].x == MOTION_PARKED {
        if !write {
            offs[nb * ng + i] = 0u;
        }
        return;
    }
    var base = 0u;
    var end = 0u;
    if write {
        base = offs[nb * ng + i];
        end = offs[nb * ng + i + 1u];
        if end > params.contact_capacity || end == base {
            return;
        }
    }
    let pi = sorted_pos[t];
    if spheres_only() {
        // One visit for both passes (a second would be unrolled and compiled again).
        let n_sph = visit_spheres(i, pi, write, base);
        if !write {
            offs[nb * ng + i] = n_sph;
        } else {
            write_sphere_row(i, pi, base, min(n_sph, end - base));
        }
        return;
    }
    let n_found = visit_any(i, pi, write, base);
    if !write {
        offs[nb * ng + i] = n_found;
        return;
    }
    let n = min(n_found, end - base);
    // The row sorted by (body B, feature), keys distinct within a row: an insertion sort up
    // to SHORT_ROW records (at most SHORT_ROW²/2 moves), a heap sort above (see
    // common/collide_keys.wgsl for why). A large grain's row comes in order (`walk_next`,
    // WALK_INDEX): the insertion sort passes it in n steps where a heap sort would take
    // 2 n log2 n.
    let short = n <= SHORT_ROW || pi.w > params.large_radius;
    for (var a = base + 1u; a < select(base, base + n, short); a++) {
        let c = contacts_at(a);
        var b = a;
        while b > base && record_above(contacts_at(b - 1u).ids, c.ids) {
            contacts_put(b, contacts_at(b - 1u));
            b -= 1u;
        }
        contacts_put(b, c);
    }
    records_heap_sort(base, select(n, 0u, short));
}

const SHORT_ROW: u32 = 32u;

// Whether a record with ids x sorts after one with ids y: by B, then feature.
fn record_above(x: vec4<u32>, y: vec4<u32>) -> bool {
    return x.y > y.y || (x.y == y.y && x.z > y.z);
}

// Restores the max-heap below `root` in the records [base .. base + end).
fn records_sift(base: u32, root0: u32, end: u32) {
    var root = root0;
    let top = contacts_at(base + root);
    loop {
        let l = 2u * root + 1u;
        if l >= end {
            break;
        }
        var m = l;
        var cm = contacts_at(base + l);
        if l + 1u < end {
            let cr = contacts_at(base + l + 1u);
            if record_above(cr.ids, cm.ids) {
                m = l + 1u;
                cm = cr;
            }
        }
        if !record_above(cm.ids, top.ids) {
            break;
        }
        contacts_put(base + root, cm);
        root = m;
    }
    contacts_put(base + root, top);
}

// Heap sort of the row's n records by (B, feature) (n = 0: no loop entered).
fn records_heap_sort(base: u32, n: u32) {
    for (var k = n / 2u; k > 0u; k--) {
        records_sift(base, k - 1u, n);
    }
    for (var e = n; e > 1u; e--) {
        let top = contacts_at(base);
        contacts_put(base, contacts_at(base + e - 1u));
        contacts_put(base + e - 1u, top);
        records_sift(base, 0u, e - 1u);
    }
}

// Sphere-only write pass: the visit noted the row's B ids (visit order) in body_entries; each
// contact goes straight to its place in B order, so no record is read back and moved (the
// sort of `detect` costs more than the visit on lavapipe), and the 64 B record is written
// once per contact, outside the visit's loops (where every lane of a SIMD group paid for the
// store whenever one lane found a pair). A row of up to 16 ids is sorted in registers as it
// is read (`keys_insert`, cheaper than ranking in storage: book: Benchmarks, measurement
// history); a longer one by a heap sort in place (common/collide_keys.wgsl).
fn write_sphere_row(i: u32, pi: vec4<f32>, base: u32, n: u32) {
    let nb = params.boundaries;
    let bi = nb + i;
    let ma = info[bi].y;
    let mua = materials[ma].x;
    // A large grain's row (`walk_next`, WALK_INDEX) comes in index order, and may be long (a boulder on
    // a bed of small grains): no ranking for it.
    let ordered = pi.w > params.large_radius;
    let short = !ordered && n <= 16u;
    let ns = select(0u, n, short);
    var keys = Keys(vec4<u32>(NO_KEY), vec4<u32>(NO_KEY), vec4<u32>(NO_KEY), vec4<u32>(NO_KEY));
    for (var m = 0u; m < ns; m++) {
        keys = keys_insert(keys, body_entries[base + m]);
    }
    for (var m = 0u; m < ns; m++) {
        let j = keys_pick(keys, m);
        contacts_put(base + m, pair_contact_from(bi, ma, mua, nb + j, pi, pos[nb + j]));
    }
    // Long rows: heap-sorted in place (a large grain's row is in order already), then each
    // record written at its place (no lane enters these loops unless some lane's row is long).
    let nl = select(n, 0u, short);
    entries_heap_sort(base, select(nl, 0u, ordered));
    for (var m = 0u; m < nl; m++) {
        let j = body_entries[base + m];
        contacts_put(base + m, pair_contact_from(bi, ma, mua, nb + j, pi, pos[nb + j]));
    }
}
