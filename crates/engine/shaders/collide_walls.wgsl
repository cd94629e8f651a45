// Collision, boundary-grain: every grain against every boundary body (bodies 0..nb).
// count pass (`detect` dispatched with z = 1): per grain j, per boundary w (those of
//        `wall_range`): number of contacts -> offs[w*ng + j].
// write pass (z = 2, dispatched indirectly from counts[8..12], see collide_grid::finalize):
//        one thread per boundary contact k; the thread of a row's first contact (binary
//        search in the scanned offs) writes the row (w, j) at offs[w*ng + j]. A thread per
//        grain ran every boundary's narrow phase again in every SIMD group with one contact
//        (lavapipe executes masked-off lanes too; a side wall meets every lattice row), and
//        cost several times this pass (book: Benchmarks). Because the row-count
//        array is laid out boundary-major, the list comes out sorted by (A = w, B = grain,
//        feature) with no sort: features are produced in ascending order (box walls 0..5,
//        cylinder side/bottom/top, mesh triangles ascending in each bin).
// Boundary shapes are in their body's local frame; the pose is the body's pos/rot.
// Mesh feature id = 7 * triangle + sub, sub 0 = face, 1 + k = edge k (v_k -> v_k+1),
// 4 + k = vertex k. An edge / vertex is reported only by its owning triangle (lowest index)
// and only when the sphere centre lies in its Voronoi region for every incident triangle.

@group(0) @binding(0) var<uniform> params: CollideParams;
@group(0) @binding(1) var<storage, read> pos: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> rot: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> info: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> materials: array<vec4<f32>>;
// 4 vec4 per boundary shape (see src/collide/mod.rs, `shape_records`).
@group(0) @binding(5) var<storage, read> shapes: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> mesh_f: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read> mesh_u: array<u32>;
@group(0) @binding(8) var<storage, read_write> offs: array<u32>;
@group(0) @binding(9) var<storage, read_write> contacts: array<Contact>; // chunked(4)
// The boundaries [x, y) this count dispatch tests every grain against: all of them on a GPU;
// blocks of them, one dispatch each, on a CPU adapter, where llvmpipe silently ends an
// invocation's loops after 65 535 iterations in all and every boundary runs some (the loops
// of every narrow phase the stage holds, once each even when no lane takes them).
// The boundaries one dispatch covers, [first, end) (src/collide `wall_ranges`).
struct WallRange {
    first: u32,
    end: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(10) var<uniform> wall_range: WallRange;

const NONE: u32 = 0xffffffffu;

var<private> g_write: bool;
var<private> g_base: u32;
var<private> g_n: u32;
var<private> g_w: u32;
var<private> g_b: u32;
var<private> g_xa: vec3<f32>;
var<private> g_qa: vec4<f32>;
var<private> g_pb: vec4<f32>;
// The sphere `emit` tests (the grain, or a clump member) and the feature offset (member << 24).
var<private> g_ps: vec4<f32>;
var<private> g_fb: u32;
var<private> g_mu: f32;
var<private> g_mat: u32;
// The pair has a patch friction model (HAS_PATCHES and a material flagged in materials[].y).
var<private> g_patch: bool;
// Its record's feature (patch_feature).
var<private> g_feature: u32;

var<private> m_tri: u32;
var<private> m_vert: u32;
var<private> m_norm: u32;

// The record of sphere g_ps's contact with local normal nl (from the boundary to the grain)
// and gap: midpoint on the normal through the sphere's centre.
fn local_record(feature: u32, nl: vec3<f32>, gap: f32) -> Contact {
    let n = quat_rotate(g_qa, nl);
    let p = g_ps.xyz - n * (g_ps.w + 0.5 * gap);
    var c: Contact;
    c.n_gap = vec4<f32>(n, gap);
    c.ra = vec4<f32>(p - g_xa, g_mu);
    c.rb = vec4<f32>(p - g_pb.xyz, 0.0);
    c.ids = vec4<u32>(g_w, g_b, g_fb + feature, g_mat);
    return c;
}

// A contact with local normal nl (from the boundary to the grain) and gap.
fn emit(feature: u32, nl: vec3<f32>, gap: f32) {
    if gap > params.envelope {
        return;
    }
    if g_write && g_base + g_n < params.contact_capacity {
        contacts_put(g_base + g_n, local_record(feature, nl, gap));
    }
    g_n += 1u;
}

// A contact at world midpoint p with world normal n (boundary -> grain).
fn emit_at(feature: u32, n: vec3<f32>, p: vec3<f32>, gap: f32) {
    if gap > params.envelope {
        return;
    }
    if g_write && g_base + g_n < params.contact_capacity {
        var c: Contact;
        c.n_gap = vec4<f32>(n, gap);
        c.ra = vec4<f32>(p - g_xa, g_mu);
        c.rb = vec4<f32>(p - g_pb.xyz, 0.0);
        c.ids = vec4<u32>(g_w, g_b, feature, g_mat);
        contacts_put(g_base + g_n, c);
    }
    g_n += 1u;
}

fn emit_manifold(m: Manifold) {
    for (var k = 0u; k < m.count; k++) {
        emit_at(m.f[k], m.n, m.p[k].xyz, m.p[k].w);
    }
}

// Patch pairs (book: Contact patches): a face–face manifold's points keep only their normal rows (μ = 0;
// the friction is the patch block's), and the patch record follows the pair's points.
fn emit_manifold_frictionless(m: Manifold) {
    let mu = g_mu;
    g_mu = 0.0;
    emit_manifold(m);
    g_mu = mu;
}

fn emit_patch(n: vec3<f32>, g: PatchGeom) {
    if g_write && g_base + g_n < params.contact_capacity {
        contacts_put(g_base + g_n, patch_record(g_w, g_b, n, g, g_xa, g_pb.xyz, g_mu, g_mat, g_feature));
    }
    g_n += 1u;
}

// A single manifold (plane, solid box): with its patch when the pair has a patch model.
fn emit_manifold_or_patch(m: Manifold) {
    if HAS_PATCHES && g_patch {
        let g = patch_geom(m);
        if g.ok {
            emit_manifold_frictionless(m);
            emit_patch(m.n, g);
            return;
        }
    }
    emit_manifold(m);
}

// ---------------------------------------------------------------- box grains
// Box grain against boundary kinds plane, box container, solid box, cylinder container
// (Collide::new refuses the others). Features ascend: containers give wall * 8 + vertex
// (box) or group * 8 + vertex (cylinder: side, bottom, top).
fn wall_box(kind: u32, a: vec4<f32>) {
    let env = params.envelope;
    let b = make_obb(g_pb.xyz, rot[g_b], shapes[4u * info[g_b].w].xyz);
    let cl = quat_rotate_inv(g_qa, b.c - g_xa);
    switch kind {
        case SHAPE_PLANE: {
            emit_manifold_or_patch(box_plane(quat_rotate(g_qa, vec3<f32>(0.0, 0.0, 1.0)), g_xa, b, env, 0u));
        }
        case SHAPE_BOX_CONTAINER: {
            let h = a.xyz;
            if !(all(abs(cl.xy) <= h.xy) && cl.z >= -h.z && cl.z <= h.z) {
                return;
            }
            var walls = array<vec3<f32>, 6>(
                vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(-1.0, 0.0, 0.0), vec3<f32>(0.0, 1.0, 0.0),
                vec3<f32>(0.0, -1.0, 0.0), vec3<f32>(0.0, 0.0, 1.0), vec3<f32>(0.0, 0.0, -1.0),
            );
            // Patch pairs: one patch, on the first wall whose manifold is face–face.
            var pk = 6u;
            var pg = PatchGeom(false, vec3<f32>(0.0), 0.0, 0.0);
            var pn = vec3<f32>(0.0);
            if HAS_PATCHES && g_patch {
                for (var k = 0u; k < 6u; k++) {
                    if (k == 5u && a.w != 0.0) || pk < 6u {
                        continue;
                    }
                    let nl = walls[k];
                    let m = box_plane(quat_rotate(g_qa, nl), g_xa + quat_rotate(g_qa, -nl * h), b, env, 8u * k);
                    let g = patch_geom(m);
                    if g.ok {
                        pk = k;
                        pg = g;
                        pn = m.n;
                    }
                }
            }
            for (var k = 0u; k < 6u; k++) {
                if k == 5u && a.w != 0.0 {
                    continue;
                }
                let nl = walls[k];
                let x0 = g_xa + quat_rotate(g_qa, -nl * h);
                if k == pk {
                    emit_manifold_frictionless(box_plane(quat_rotate(g_qa, nl), x0, b, env, 8u * k));
                } else {
                    emit_manifold(box_plane(quat_rotate(g_qa, nl), x0, b, env, 8u * k));
                }
            }
            if pk < 6u {
                emit_patch(pn, pg);
            }
        }
        case SHAPE_SOLID_BOX: {
            emit_manifold_or_patch(box_box(make_obb(g_xa, g_qa, a.xyz), b, env));
        }
        case SHAPE_CYLINDER_CONTAINER: {
            let rad = a.x;
            let hgt = a.y;
            if !(length(cl.xy) <= rad && cl.z >= 0.0 && cl.z <= hgt) {
                return;
            }
            var vl: array<vec3<f32>, 8>;
            for (var k = 0u; k < 8u; k++) {
                vl[k] = quat_rotate_inv(g_qa, obb_vertex(b, k) - g_xa);
            }
            for (var grp = 0u; grp < 3u; grp++) {
                if grp == 2u && a.z != 0.0 {
                    continue;
                }
                var g: array<f32, 8>;
                for (var k = 0u; k < 8u; k++) {
                    let v = vl[k];
                    g[k] = select(select(hgt - v.z, v.z, grp == 1u), rad - length(v.xy), grp == 0u);
                }
                let mask = deepest8(g, env);
                for (var k = 0u; k < 8u; k++) {
                    if (mask & (1u << k)) == 0u {
                        continue;
                    }
                    let v = vl[k];
                    var nl = vec3<f32>(0.0, 0.0, select(-1.0, 1.0, grp == 1u));
                    if grp == 0u {
                        let rho = length(v.xy);
                        nl = vec3<f32>(-1.0, 0.0, 0.0);
                        if rho > 0.0 {
                            nl = vec3<f32>(-v.xy / rho, 0.0);
                        }
                    }
                    let n = quat_rotate(g_qa, nl);
                    emit_at(8u * grp + k, n, obb_vertex(b, k) - n * (0.5 * g[k]), g[k]);
                }
            }
        }
        default: {}
    }
}

// capsule:begin
// ---------------------------------------------------------------- capsule grains
// Capsule grain against plane, box container, solid box, cylinder container (Collide::new
// refuses the others); common/collide_capsule.wgsl. Features ascend: box container
// 2 * wall + end, cylinder container 2 * group + end (side, bottom, top).
fn emit_capsule(m: CapContacts) {
    for (var k = 0u; k < m.count; k++) {
        emit_at(m.f[k], m.n[k], m.p[k].xyz, m.p[k].w);
    }
}

fn wall_capsule(kind: u32, a: vec4<f32>) {
    let env = params.envelope;
    let cap = make_capsule(g_pb.xyz, rot[g_b], shapes[4u * info[g_b].w]);
    let cl = quat_rotate_inv(g_qa, cap.c - g_xa);
    switch kind {
        case SHAPE_PLANE: {
            emit_capsule(capsule_plane(cap, quat_rotate(g_qa, vec3<f32>(0.0, 0.0, 1.0)), g_xa, env, 0u));
        }
        case SHAPE_BOX_CONTAINER: {
            let h = a.xyz;
            if !(all(abs(cl.xy) <= h.xy) && cl.z >= -h.z && cl.z <= h.z) {
                return;
            }
            var walls = array<vec3<f32>, 6>(
                vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(-1.0, 0.0, 0.0), vec3<f32>(0.0, 1.0, 0.0),
                vec3<f32>(0.0, -1.0, 0.0), vec3<f32>(0.0, 0.0, 1.0), vec3<f32>(0.0, 0.0, -1.0),
            );
            for (var k = 0u; k < 6u; k++) {
                if k == 5u && a.w != 0.0 {
                    continue;
                }
                let nl = walls[k];
                let x0 = g_xa + quat_rotate(g_qa, -nl * h);
                emit_capsule(capsule_plane(cap, quat_rotate(g_qa, nl), x0, env, 2u * k));
            }
        }
        case SHAPE_SOLID_BOX: {
            if HAS_BOXES || HAS_CAPSULES {
                emit_capsule(capsule_box(cap, make_obb(g_xa, g_qa, a.xyz), env));
            }
        }
        case SHAPE_CYLINDER_CONTAINER: {
            let rad = a.x;
            let hgt = a.y;
            if !(length(cl.xy) <= rad && cl.z >= 0.0 && cl.z <= hgt) {
                return;
            }
            for (var grp = 0u; grp < 3u; grp++) {
                if grp == 2u && a.z != 0.0 {
                    continue;
                }
                for (var e = 0u; e < 2u; e++) {
                    let pw = cap_end(cap, e);
                    let v = quat_rotate_inv(g_qa, pw - g_xa);
                    let rho = length(v.xy);
                    var nl = vec3<f32>(0.0, 0.0, select(-1.0, 1.0, grp == 1u));
                    var g = select(hgt - v.z, v.z, grp == 1u);
                    if grp == 0u {
                        nl = vec3<f32>(-1.0, 0.0, 0.0);
                        if rho > 0.0 {
                            nl = vec3<f32>(-v.xy / rho, 0.0);
                        }
                        g = rad - rho;
                    }
                    let gap = g - cap.r;
                    let n = quat_rotate(g_qa, nl);
                    emit_at(2u * grp + e, n, pw - n * (cap.r + 0.5 * gap), gap);
                }
            }
        }
        default: {}
    }
}
// capsule:end

// cylinder:begin
// ---------------------------------------------------------------- cylinder grains
// Cylinder grain against plane, box container, cylinder container (Collide::new refuses
// the others); common/collide_cylinder.wgsl. Features ascend: box container 10 * wall +
// plane feature, cylinder container side e, floor 10 + .., lid 20 + ...
fn emit_cylinder(m: CylContacts) {
    for (var k = 0u; k < m.count; k++) {
        emit_at(m.f[k], m.n[k], m.p[k].xyz, m.p[k].w);
    }
}

// Disc patches (book: Contact patches): the first wall on which a whole end disc of the cylinder
// lies within the envelope (all 4 rim points of a flat disc: `cylinder_plane` features
// offset + 4e .. offset + 4e + 3) gives the pair a `lugre_reduced` patch record, the disc
// under uniform pressure: centre = mean of the 4 midway rim points, r = mean distance from
// the centre = 2R/3, visc = mean squared distance / r² = (R²/2) / (4R²/9) = 9/8. That
// wall's points keep only their normal rows. Twin: `reference::patch_collide::detect_with_patches`.
var<private> g_disc: PatchGeom;
var<private> g_disc_n: vec3<f32>;

fn cyl_disc_patch(m: CylContacts, offset: u32, r: f32) -> PatchGeom {
    var g = PatchGeom(false, vec3<f32>(0.0), 0.0, 0.0);
    var first = 4u;
    if m.count >= 4u && m.f[3] == offset + 3u {
        first = 0u;
    } else if m.count >= 4u && m.f[m.count - 4u] == offset + 4u && m.f[m.count - 1u] == offset + 7u {
        first = m.count - 4u;
    }
    if first == 4u {
        return g;
    }
    var c = vec3<f32>(0.0);
    for (var k = first; k < first + 4u; k++) {
        c += m.p[k].xyz;
    }
    g.ok = true;
    g.centre = 0.25 * c;
    g.r = 2.0 / 3.0 * r;
    g.visc = 9.0 / 8.0;
    return g;
}

// The cylinder against the half-space dot(x − x0, n) ≥ 0 (features from `offset`).
fn emit_cylinder_plane(cy: Cylinder, n: vec3<f32>, x0: vec3<f32>, env: f32, offset: u32) {
    let m = cylinder_plane(cy, n, x0, env, offset);
    if HAS_PATCHES && g_patch && g_feature == PATCH_FEATURE && !g_disc.ok {
        let g = cyl_disc_patch(m, offset, cy.r);
        if g.ok {
            g_disc = g;
            g_disc_n = n;
            let mu = g_mu;
            g_mu = 0.0;
            emit_cylinder(m);
            g_mu = mu;
            return;
        }
    }
    emit_cylinder(m);
}

fn wall_cylinder(kind: u32, a: vec4<f32>) {
    let env = params.envelope;
    let cy = make_cylinder(g_pb.xyz, rot[g_b], shapes[4u * info[g_b].w]);
    let cl = quat_rotate_inv(g_qa, cy.c - g_xa);
    let up = quat_rotate(g_qa, vec3<f32>(0.0, 0.0, 1.0));
    g_disc = PatchGeom(false, vec3<f32>(0.0), 0.0, 0.0);
    switch kind {
        case SHAPE_PLANE: {
            emit_cylinder_plane(cy, up, g_xa, env, 0u);
        }
        case SHAPE_BOX_CONTAINER: {
            let h = a.xyz;
            if !(all(abs(cl.xy) <= h.xy) && cl.z >= -h.z && cl.z <= h.z) {
                return;
            }
            var walls = array<vec3<f32>, 6>(
                vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(-1.0, 0.0, 0.0), vec3<f32>(0.0, 1.0, 0.0),
                vec3<f32>(0.0, -1.0, 0.0), vec3<f32>(0.0, 0.0, 1.0), vec3<f32>(0.0, 0.0, -1.0),
            );
            for (var k = 0u; k < 6u; k++) {
                if k == 5u && a.w != 0.0 {
                    continue;
                }
                let nl = walls[k];
                let x0 = g_xa + quat_rotate(g_qa, -nl * h);
                emit_cylinder_plane(cy, quat_rotate(g_qa, nl), x0, env, 10u * k);
            }
        }
        case SHAPE_CYLINDER_CONTAINER: {
            if !(length(cl.xy) <= a.x && cl.z >= 0.0 && cl.z <= a.y) {
                return;
            }
            emit_cylinder(cylinder_container_side(cy, g_xa, g_qa, a.x, env));
            emit_cylinder_plane(cy, up, g_xa, env, 10u);
            if a.z == 0.0 {
                let top = g_xa + up * a.y;
                emit_cylinder_plane(cy, -up, top, env, 20u);
            }
        }
        default: {}
    }
    if g_disc.ok {
        emit_patch(g_disc_n, g_disc);
    }
}
// cylinder:end

fn emit_point(feature: u32, cl: vec3<f32>, q: vec3<f32>, fallback: vec3<f32>, r: f32) {
    let d = cl - q;
    let dist = length(d);
    var nl = fallback;
    if dist > 0.0 {
        nl = d / dist;
    }
    emit(feature, nl, dist - r);
}

// ---------------------------------------------------------------- triangle meshes
fn mvert(v: u32) -> vec3<f32> {
    return mesh_f[m_vert + v].xyz;
}

fn tri_v(t: u32, k: u32) -> u32 {
    return mesh_u[m_tri + 8u * t + k];
}

// Signed distance-like side of c w.r.t. edge k of triangle t in t's plane (>= 0: outside).
// Computed from the canonical edge (lower vertex id first), so every triangle sharing the
// edge evaluates the same expression.
fn edge_side(t: u32, k: u32, c: vec3<f32>) -> f32 {
    let va = tri_v(t, k);
    let vb = tri_v(t, (k + 1u) % 3u);
    let pa = mvert(min(va, vb));
    let pb = mvert(max(va, vb));
    let nt = mesh_f[m_norm + t].xyz;
    let s = dot(c - pa, cross(pb - pa, nt));
    let flags = mesh_u[m_tri + 8u * t + 3u];
    return select(s, -s, ((flags >> (6u + k)) & 1u) != 0u);
}

// (t, L): projection of c on the canonical edge, t in [0, L] on the segment.
fn edge_param(va: u32, vb: u32, c: vec3<f32>) -> vec2<f32> {
    let pa = mvert(min(va, vb));
    let e = mvert(max(va, vb)) - pa;
    return vec2<f32>(dot(c - pa, e), dot(e, e));
}

// c lies beyond vertex v on the line of edge (v, u).
fn vertex_side(v: u32, u: u32, c: vec3<f32>) -> bool {
    let tl = edge_param(v, u, c);
    if v < u {
        return tl.x <= 0.0;
    }
    return tl.x >= tl.y;
}

// The feature of triangle t whose Voronoi region holds c (face 0, edge 1 + k, vertex 4 + k),
// or NONE where another triangle reports it (twin `MeshRef::region`).
fn mesh_region(t: u32, c: vec3<f32>, vadj: u32) -> u32 {
    let base = m_tri + 8u * t;
    let flags = mesh_u[base + 3u];
    let v = vec3<u32>(mesh_u[base], mesh_u[base + 1u], mesh_u[base + 2u]);
    let s = vec3<f32>(edge_side(t, 0u, c), edge_side(t, 1u, c), edge_side(t, 2u, c));
    if all(s < vec3<f32>(0.0)) {
        return 0u;
    }
    for (var k = 0u; k < 3u; k++) {
        if s[k] < 0.0 {
            continue;
        }
        let tl = edge_param(v[k], v[(k + 1u) % 3u], c);
        if tl.x > 0.0 && tl.x < tl.y {
            let nbr = mesh_u[base + 4u + k];
            let inside_nbr = nbr != NONE && edge_side(nbr >> 2u, nbr & 3u, c) < 0.0;
            return select(NONE, 1u + k, ((flags >> k) & 1u) != 0u && !inside_nbr);
        }
    }
    for (var k = 0u; k < 3u; k++) {
        let vk = v[k];
        if vertex_side(vk, v[(k + 1u) % 3u], c) && vertex_side(vk, v[(k + 2u) % 3u], c) {
            var beyond = ((flags >> (3u + k)) & 1u) != 0u;
            let a0 = mesh_u[vadj + vk];
            let a1 = mesh_u[vadj + vk + 1u];
            for (var a = a0; a < a1; a++) {
                beyond = beyond && vertex_side(vk, mesh_u[a], c);
            }
            return select(NONE, 4u + k, beyond);
        }
    }
    return NONE;
}

fn mesh_triangle(t: u32, cl: vec3<f32>, r: f32, vadj: u32) {
    let base = m_tri + 8u * t;
    if (mesh_u[base + 3u] & 512u) != 0u {
        return;
    }
    let nt = mesh_f[m_norm + t].xyz;
    let v = vec3<u32>(mesh_u[base], mesh_u[base + 1u], mesh_u[base + 2u]);
    let hd = dot(cl - mvert(v.x), nt);
    if abs(hd) - r > params.envelope {
        return;
    }
    let nl = select(nt, -nt, hd < 0.0);
    let f = mesh_region(t, cl, vadj);
    if f == 0u {
        emit(7u * t, nl, abs(hd) - r);
    } else if f < 4u {
        let va = v[f - 1u];
        let vb = v[f % 3u];
        let tl = edge_param(va, vb, cl);
        let pa = mvert(min(va, vb));
        emit_point(7u * t + f, cl, pa + (mvert(max(va, vb)) - pa) * (tl.x / tl.y), nl, r);
    } else if f != NONE {
        emit_point(7u * t + f, cl, mvert(v[f - 4u]), nl, r);
    }
}

// Mesh s's tables (m_tri, m_vert, m_norm) and the bin of local point cl: its list's range
// in mesh_u (empty outside the grid), and the vertex adjacency's offset.
fn mesh_bin(s: u32, cl: vec3<f32>) -> vec3<u32> {
    let grid = shapes[4u * s + 1u];
    let d = bitcast<vec4<u32>>(shapes[4u * s + 2u]);
    let b = bitcast<vec4<u32>>(shapes[4u * s + 3u]);
    m_tri = b.x;
    m_vert = b.y;
    m_norm = b.z;
    let cf = floor((cl - grid.xyz) / grid.w);
    if any(cf < vec3<f32>(0.0)) || any(cf >= vec3<f32>(d.xyz)) {
        return vec3<u32>(0u, 0u, b.w);
    }
    let c = vec3<u32>(cf);
    let bin = c.x + d.x * (c.y + d.y * c.z);
    return vec3<u32>(mesh_u[d.w + bin], mesh_u[d.w + bin + 1u], b.w);
}

fn mesh_contacts(s: u32, cl: vec3<f32>, r: f32) {
    let items = mesh_bin(s, cl);
    for (var k = items.x; k < items.y; k++) {
        mesh_triangle(mesh_u[k], cl, r, items.z);
    }
}

// convex:begin
// ---------------------------------------------------------------- convex hull grains
// Hull grain against a plane, the walls of a box or cylinder container (its vertices, the 4
// deepest within the envelope per wall, ties to the lower vertex; features 64 × wall (box)
// or 64 × group (cylinder: side, bottom, top) + vertex, ascending), and a solid box
// (polytope_pair, common/collide_polytope.wgsl). Collide::new refuses the other kinds.
// Twin: src/reference/convex.rs.
const HULL_PLANE: u32 = 3u;

// Gap of vertex k against wall `mode`: HULL_PLANE (world normal n through x0), or a
// cylinder container's side (0), bottom (1) or top (2) (a = radius, height, open).
fn hull_wall_gap(rec: vec4<u32>, k: u32, mode: u32, n: vec3<f32>, x0: vec3<f32>, a: vec4<f32>) -> f32 {
    let v = g_pb.xyz + quat_rotate(rot[g_b], shapes[rec.z + k].xyz);
    if mode == HULL_PLANE {
        return dot(v - x0, n);
    }
    let l = quat_rotate_inv(g_qa, v - g_xa);
    return select(select(a.y - l.z, l.z, mode == 1u), a.x - length(l.xy), mode == 0u);
}

// The wall's normal (world, towards the hull) at vertex k.
fn hull_wall_normal(rec: vec4<u32>, k: u32, mode: u32, n: vec3<f32>) -> vec3<f32> {
    if mode == HULL_PLANE {
        return n;
    }
    if mode != 0u {
        return quat_rotate(g_qa, vec3<f32>(0.0, 0.0, select(-1.0, 1.0, mode == 1u)));
    }
    let v = g_pb.xyz + quat_rotate(rot[g_b], shapes[rec.z + k].xyz);
    let l = quat_rotate_inv(g_qa, v - g_xa);
    let rho = length(l.xy);
    var nl = vec3<f32>(-1.0, 0.0, 0.0);
    if rho > 0.0 {
        nl = vec3<f32>(-l.xy / rho, 0.0);
    }
    return quat_rotate(g_qa, nl);
}

fn hull_wall(rec: vec4<u32>, mode: u32, n: vec3<f32>, x0: vec3<f32>, a: vec4<f32>, offset: u32) {
    let env = params.envelope;
    var pick = array<u32, 4>(NONE, NONE, NONE, NONE);
    var pg = -3.0e38;
    var pk = NONE;
    // Four selection passes: the next (gap, vertex) after the previous pick.
    for (var s = 0u; s < 4u; s++) {
        var bg = 3.0e38;
        var bk = NONE;
        for (var k = 0u; k < rec.x; k++) {
            let g = hull_wall_gap(rec, k, mode, n, x0, a);
            if g <= env && (pk == NONE || hull_before(pg, pk, g, k)) && (bk == NONE || hull_before(g, k, bg, bk)) {
                bg = g;
                bk = k;
            }
        }
        if bk == NONE {
            break;
        }
        pick[s] = bk;
        pg = bg;
        pk = bk;
    }
    // Emit in ascending vertex order.
    for (var i = 1u; i < 4u; i++) {
        var b = i;
        while b > 0u && pick[b - 1u] > pick[b] {
            let t = pick[b];
            pick[b] = pick[b - 1u];
            pick[b - 1u] = t;
            b -= 1u;
        }
    }
    for (var s = 0u; s < 4u; s++) {
        let k = pick[s];
        if k == NONE {
            continue;
        }
        let g = hull_wall_gap(rec, k, mode, n, x0, a);
        let v = g_pb.xyz + quat_rotate(rot[g_b], shapes[rec.z + k].xyz);
        let nk = hull_wall_normal(rec, k, mode, n);
        emit_at(offset + k, nk, v - nk * (0.5 * g), g);
    }
}

fn wall_convex(kind: u32, a: vec4<f32>) {
    let rec = bitcast<vec4<u32>>(shapes[4u * info[g_b].w]);
    let zero = vec3<f32>(0.0);
    let cl = quat_rotate_inv(g_qa, g_pb.xyz - g_xa);
    switch kind {
        case SHAPE_PLANE: {
            hull_wall(rec, HULL_PLANE, quat_rotate(g_qa, vec3<f32>(0.0, 0.0, 1.0)), g_xa, a, 0u);
        }
        case SHAPE_BOX_CONTAINER: {
            let h = a.xyz;
            if !(all(abs(cl.xy) <= h.xy) && cl.z >= -h.z && cl.z <= h.z) {
                return;
            }
            var walls = array<vec3<f32>, 6>(
                vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(-1.0, 0.0, 0.0), vec3<f32>(0.0, 1.0, 0.0),
                vec3<f32>(0.0, -1.0, 0.0), vec3<f32>(0.0, 0.0, 1.0), vec3<f32>(0.0, 0.0, -1.0),
            );
            for (var k = 0u; k < 6u; k++) {
                if k == 5u && a.w != 0.0 {
                    continue;
                }
                let nl = walls[k];
                hull_wall(rec, HULL_PLANE, quat_rotate(g_qa, nl), g_xa + quat_rotate(g_qa, -nl * h), a, 64u * k);
            }
        }
        case SHAPE_CYLINDER_CONTAINER: {
            if !(length(cl.xy) <= a.x && cl.z >= 0.0 && cl.z <= a.y) {
                return;
            }
            for (var grp = 0u; grp < 3u; grp++) {
                if grp == 2u && a.z != 0.0 {
                    continue;
                }
                hull_wall(rec, grp, zero, zero, a, 64u * grp);
            }
        }
        // polytope:begin
        case SHAPE_SOLID_BOX: {
            emit_manifold(polytope_pair(g_w, g_b, pos[g_w], g_pb));
        }
        // polytope:end
        default: {}
    }
}
// convex:end

// cylpair:begin
// ---------------------------------------------------------------- support-mapped pairs
// A solid cylinder against a box, capsule, cylinder or hull grain, a solid box against a
// cylinder grain, and (meshpair) a mesh's triangles against those grains:
// common/collide_support.wgsl's pair with the boundary as a support-mapped shape (twin
// `support::wall_pair`). A solid boundary is not shrunk (its edges stay sharp; the grain's
// core margin keeps the cores apart at rest), except against a hull, which has no margin:
// then its core is shrunk by the margin of the smaller of the two. A triangle is C, in the
// mesh's frame; against a hull its core moves back by the hull's margin-sized share.
// Mesh features are 64 t + the pair's; a pair whose normal is not the triangle's is kept
// only by the triangle that owns the edge or vertex its grain's core witness lies beyond
// (mesh_region, as for spheres).
fn emit_support(m: CylContacts, flip: bool, local: bool, fbase: u32) {
    for (var k = 0u; k < m.count; k++) {
        var n = select(m.n[k], -m.n[k], flip);
        var p = m.p[k].xyz;
        if local {
            n = quat_rotate(g_qa, n);
            p = g_xa + quat_rotate(g_qa, p);
        }
        emit_at(fbase + m.f[k], n, p, m.p[k].w);
    }
}

// Triangle t against grain x (mesh frame) as C; kind NONE when degenerate or out of reach.
fn tri_sup(t: u32, x: Sup) -> Sup {
    let base = m_tri + 8u * t;
    let nt = mesh_f[m_norm + t].xyz;
    let p0 = mvert(mesh_u[base]);
    let e1 = mvert(mesh_u[base + 1u]) - p0;
    let e2 = mvert(mesh_u[base + 2u]) - p0;
    let hd = dot(x.c - p0, nt);
    var kind = SUP_TRI;
    if (mesh_u[base + 3u] & 512u) != 0u || abs(hd) - x.bound > params.envelope {
        kind = NONE;
    }
    let m = select(0.0, SUP_MARGIN * x.bound, x.m == 0.0);
    let bound = max(max(length(e1), length(e2)), length(e2 - e1));
    let nrm = vec4<f32>(select(nt, -nt, hd < 0.0), 0.0);
    return Sup(kind, p0, nrm, e1, bound, m, bitcast<vec4<u32>>(vec4<f32>(e2, 0.0)));
}

fn wall_support(kind: u32, s: u32, a: vec4<f32>, gk: u32) -> bool {
    var x = grain_sup(g_b, g_pb);
    let env = params.envelope;
    var items = vec3<u32>(0u, 1u, 0u);
    let mesh = kind == SHAPE_MESH;
    if mesh {
        // meshpair:begin
        x.c = quat_rotate_inv(g_qa, x.c - g_xa);
        x.q = quat_mul(vec4<f32>(-g_qa.xyz, g_qa.w), x.q);
        items = mesh_bin(s, x.c);
        // meshpair:end
    } else if kind != SHAPE_SOLID_CYLINDER && !(kind == SHAPE_SOLID_BOX && gk == SHAPE_CYLINDER) {
        return false;
    }
    for (var i = items.x; i < items.y; i++) {
        var c = x;
        var xx = x;
        var t = 0u;
        if mesh {
            // meshpair:begin
            t = mesh_u[i];
            c = tri_sup(t, x);
            // meshpair:end
            if c.kind == NONE {
                continue;
            }
        } else if kind == SHAPE_SOLID_CYLINDER {
            let hl = 0.5 * a.y;
            let at = g_xa + quat_rotate(g_qa, vec3<f32>(0.0, 0.0, hl));
            let m = select(0.0, SUP_MARGIN * min(min(a.x, hl), x.bound), x.m == 0.0);
            let bound = length(vec2<f32>(a.x, hl));
            c = Sup(SUP_CYLINDER, at, g_qa, vec3<f32>(a.x, hl, 0.0), bound, m, vec4<u32>(0u));
        } else {
            xx = Sup(SUP_BOX, g_xa, g_qa, a.xyz, length(a.xyz), 0.0, vec4<u32>(0u));
        }
        let sn = sup_normal(c, xx);
        if sn.gap > env {
            continue;
        }
        // meshpair:begin
        if mesh && !sup_flat(dot(sn.n, c.q.xyz)) && mesh_region(t, sn.pb + sn.n * xx.m, items.z) == NONE {
            continue;
        }
        // meshpair:end
        emit_support(sup_manifold(c, xx, sn, env), kind == SHAPE_SOLID_BOX, mesh, 64u * t);
    }
    return true;
}
// cylpair:end

// ---------------------------------------------------------------- one boundary, one grain
fn wall_grain(w: u32, j: u32, write: bool, base: u32) -> u32 {
    let nb = params.boundaries;
    g_write = write;
    g_base = base;
    g_n = 0u;
    g_w = w;
    g_b = nb + j;
    g_xa = pos[w].xyz;
    g_qa = rot[w];
    g_pb = pos[nb + j];
    g_ps = g_pb;
    g_fb = 0u;
    let iw = info[w];
    let ib = info[nb + j];
    // A parked grain touches nothing.
    if PARKING && ib.x == MOTION_PARKED {
        return 0u;
    }
    g_mu = min(materials[iw.y].x, materials[ib.y].x);
    g_mat = (iw.y << 16u) | (ib.y & 0xffffu);
    g_patch = HAS_PATCHES && (materials[iw.y].y != 0.0 || materials[ib.y].y != 0.0);
    g_feature = patch_feature(materials[iw.y].y, materials[ib.y].y);
    let cl = quat_rotate_inv(g_qa, g_pb.xyz - g_xa);
    let r = g_pb.w;
    let s = iw.w;
    let a = shapes[4u * s];
    // cylpair:begin
    if ib.z != SHAPE_SPHERE && ib.z != SHAPE_CLUMP && wall_support(iw.z, s, a, ib.z) {
        return g_n;
    }
    // cylpair:end
    // The grain shape's wall routines: a new grain shape adds its case.
    switch ib.z {
        case SHAPE_BOX: {
            if HAS_BOXES {
                wall_box(iw.z, a);
                return g_n;
            }
        }
        case SHAPE_CAPSULE: {
            if HAS_CAPSULES {
                // capsule:begin
                wall_capsule(iw.z, a);
                // capsule:end
                return g_n;
            }
        }
        case SHAPE_CYLINDER: {
            if HAS_CYLINDERS {
                // cylinder:begin
                wall_cylinder(iw.z, a);
                // cylinder:end
                return g_n;
            }
        }
        case SHAPE_CLUMP: {
            if HAS_CLUMPS {
                wall_clump(iw.z, s, a, ib.w);
                return g_n;
            }
        }
        case SHAPE_CONVEX: {
            if HAS_CONVEX {
                // convex:begin
                wall_convex(iw.z, a);
                // convex:end
                return g_n;
            }
        }
        default: {}
    }
    wall_sphere(iw.z, s, a, cl, r);
    return g_n;
}

// Clump grain: each member (shape record [0] = count, first vec4 index as u32 bits) as a
// sphere, features offset by member << 24 (ascending). Twin: src/reference/clumps.rs.
fn wall_clump(kind: u32, s: u32, a: vec4<f32>, gs: u32) {
    let rec = bitcast<vec2<u32>>(shapes[4u * gs].xy);
    let qb = rot[g_b];
    let xb = g_pb.xyz;
    for (var k = 0u; k < rec.x; k++) {
        let m = shapes[rec.y + k];
        g_ps = vec4<f32>(xb + quat_rotate(qb, m.xyz), m.w);
        g_fb = k << 24u;
        wall_sphere(kind, s, a, quat_rotate_inv(g_qa, g_ps.xyz - g_xa), m.w);
    }
}

// wall_sphere's contacts (at most 6: a box container's walls), kept by `emit_sphere` and
// written by `flush_sphere` after the arms, in the write pass only: the record-writing code
// appears once instead of in every arm, and the count pass skips it (llvmpipe runs both sides
// of every `if`, masked, but skips a loop no lane enters; at 10^6 grains every record store
// is also one arm per live chunk of the contact list). Six named slots, not an array: a
// private array indexed by a per-lane count lives in scratch memory on llvmpipe, each access
// a loop over the lanes, which took most of the wall passes' time in the default scene;
// selects on constant slots stay in registers.
var<private> s_f0: vec4<f32>;
var<private> s_f1: vec4<f32>;
var<private> s_f2: vec4<f32>;
var<private> s_f3: vec4<f32>;
var<private> s_f4: vec4<f32>;
var<private> s_f5: vec4<f32>;
// The kept contacts' features (< 6: box walls, cylinder side / bottom / top), 5 bits per
// slot; mesh triangles go through `emit` instead.
var<private> s_feat: u32;
var<private> s_k: u32;

// A sphere contact with local normal nl and gap, as `emit`.
fn emit_sphere(feature: u32, nl: vec3<f32>, gap: f32) {
    if gap > params.envelope {
        return;
    }
    let v = vec4<f32>(nl, gap);
    let k = s_k;
    s_f0 = select(s_f0, v, k == 0u);
    s_f1 = select(s_f1, v, k == 1u);
    s_f2 = select(s_f2, v, k == 2u);
    s_f3 = select(s_f3, v, k == 3u);
    s_f4 = select(s_f4, v, k == 4u);
    s_f5 = select(s_f5, v, k == 5u);
    s_feat |= feature << (5u * k);
    s_k += 1u;
    g_n += 1u;
}

// Kept slot k (< 6) of `emit_sphere`.
fn kept_sphere(k: u32) -> vec4<f32> {
    var v = s_f0;
    v = select(v, s_f1, k == 1u);
    v = select(v, s_f2, k == 2u);
    v = select(v, s_f3, k == 3u);
    v = select(v, s_f4, k == 4u);
    return select(v, s_f5, k == 5u);
}

// Writes the kept contacts (write pass), numbered from `first`, as `emit` would have.
fn flush_sphere(first: u32) {
    let n = select(0u, s_k, g_write);
    for (var k = 0u; k < n; k++) {
        let at = g_base + first + k;
        if at < params.contact_capacity {
            let v = kept_sphere(k);
            let feature = (s_feat >> (5u * k)) & 31u;
            contacts_put(at, local_record(feature, v.xyz, v.w));
        }
    }
}

// The sphere g_ps (local centre cl, radius r) against boundary shape s of kind `kind`.
fn wall_sphere(kind: u32, s: u32, a: vec4<f32>, cl: vec3<f32>, r: f32) {
    let first = g_n;
    s_k = 0u;
    s_feat = 0u;
    switch kind {
        case SHAPE_PLANE: {
            emit_sphere(0u, vec3<f32>(0.0, 0.0, 1.0), cl.z - r);
        }
        case SHAPE_BOX_CONTAINER: {
            let h = a.xyz;
            if all(abs(cl.xy) <= h.xy) && cl.z >= -h.z && cl.z <= h.z {
                emit_sphere(0u, vec3<f32>(1.0, 0.0, 0.0), cl.x + h.x - r);
                emit_sphere(1u, vec3<f32>(-1.0, 0.0, 0.0), h.x - cl.x - r);
                emit_sphere(2u, vec3<f32>(0.0, 1.0, 0.0), cl.y + h.y - r);
                emit_sphere(3u, vec3<f32>(0.0, -1.0, 0.0), h.y - cl.y - r);
                emit_sphere(4u, vec3<f32>(0.0, 0.0, 1.0), cl.z + h.z - r);
                if a.w == 0.0 {
                    emit_sphere(5u, vec3<f32>(0.0, 0.0, -1.0), h.z - cl.z - r);
                }
            }
        }
        case SHAPE_SOLID_BOX: {
            let h = a.xyz;
            let q = clamp(cl, -h, h);
            let d = cl - q;
            let dist = length(d);
            if dist > 0.0 {
                emit_sphere(0u, d / dist, dist - r);
            } else {
                let depth = h - abs(cl);
                var axis = 0u;
                if depth.y < depth[axis] {
                    axis = 1u;
                }
                if depth.z < depth[axis] {
                    axis = 2u;
                }
                var nl = vec3<f32>(0.0);
                nl[axis] = select(1.0, -1.0, cl[axis] < 0.0);
                emit_sphere(0u, nl, -depth[axis] - r);
            }
        }
        case SHAPE_CYLINDER_CONTAINER: {
            let rad = a.x;
            let hgt = a.y;
            let rho = length(cl.xy);
            if rho <= rad && cl.z >= 0.0 && cl.z <= hgt {
                var e = vec3<f32>(1.0, 0.0, 0.0);
                if rho > 0.0 {
                    e = vec3<f32>(cl.xy / rho, 0.0);
                }
                emit_sphere(0u, -e, rad - rho - r);
                emit_sphere(1u, vec3<f32>(0.0, 0.0, 1.0), cl.z - r);
                if a.z == 0.0 {
                    emit_sphere(2u, vec3<f32>(0.0, 0.0, -1.0), hgt - cl.z - r);
                }
            }
        }
        case SHAPE_SOLID_CYLINDER: {
            let rad = a.x;
            let hgt = a.y;
            let rho = length(cl.xy);
            var e = vec3<f32>(1.0, 0.0, 0.0);
            if rho > 0.0 {
                e = vec3<f32>(cl.xy / rho, 0.0);
            }
            if rho > rad || cl.z < 0.0 || cl.z > hgt {
                var q = vec3<f32>(cl.xy, clamp(cl.z, 0.0, hgt));
                if rho > rad {
                    q = vec3<f32>(e.xy * rad, q.z);
                }
                let d = cl - q;
                let dist = length(d);
                emit_sphere(0u, d / dist, dist - r);
            } else {
                let side = rad - rho;
                var depth = side;
                var nl = e;
                if cl.z < depth {
                    depth = cl.z;
                    nl = vec3<f32>(0.0, 0.0, -1.0);
                }
                if hgt - cl.z < depth {
                    depth = hgt - cl.z;
                    nl = vec3<f32>(0.0, 0.0, 1.0);
                }
                emit_sphere(0u, nl, -depth - r);
            }
        }
        // mesh:begin
        case SHAPE_MESH: {
            mesh_contacts(s, cl, r);
        }
        // mesh:end
        default: {}
    }
    flush_sphere(first);
}

// One entry point for both passes, so that the narrow phase is compiled once (as
// collide_pairs' `detect`): the dispatch's z size names the pass, 1 counts, 2 writes (the
// boundary contacts split between the two layers, as collide_pairs' write pass).
@compute @workgroup_size(256)
fn detect(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let write = nwg.z == 2u;
    // One call of the narrow phase for both passes (lavapipe inlines each call: two would
    // compile it twice, for every pipeline set). Count: every boundary against grain j;
    // write: one row.
    var j = layered_index(gid, nwg);
    var w0 = wall_range.first;
    var w1 = wall_range.end;
    var base = 0u;
    if write {
        let r = first_of_row(j);
        if r == NONE {
            return;
        }
        base = j;
        j = r % params.grains;
        w0 = r / params.grains;
        w1 = w0 + 1u;
    } else if j >= params.grains {
        return;
    }
    for (var w = w0; w < w1; w++) {
        let n = wall_grain(w, j, write, base);
        if !write {
            offs[w * params.grains + j] = n;
        }
    }
}

// Write pass: the row (w·ng + j) whose first contact is boundary contact k, or NONE.
fn first_of_row(k: u32) -> u32 {
    let rows = params.boundaries * params.grains;
    if k >= min(offs[rows], params.contact_capacity) {
        return NONE;
    }
    // The row r with offs[r] <= k < offs[r + 1] (offs is the exclusive scan of the counts).
    var lo = 0u;
    var hi = rows;
    while hi - lo > 1u {
        let mid = (lo + hi) / 2u;
        if offs[mid] <= k {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if offs[lo] != k || offs[lo + 1u] > params.contact_capacity {
        return NONE;
    }
    return lo;
}
