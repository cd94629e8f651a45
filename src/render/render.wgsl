// Offscreen rendering of a run's frame: spheres as ray-cast impostors (exact silhouette and
// depth), boundary surfaces as triangles, force chains as ribbons, a shadow map from one
// directional light. Kept out of shaders/*.wgsl on purpose: build.rs registers those as
// compute stages; tests/render.rs validates this file with naga instead.

struct Camera {
    view_proj: mat4x4<f32>,
    light_view_proj: mat4x4<f32>,
    // xyz: eye position (perspective) ; w: 1 = perspective, 0 = orthographic.
    eye: vec4<f32>,
    // xyz: unit viewing direction (used by orthographic cameras).
    forward: vec4<f32>,
    // xyz: camera up, for orienting the impostor quads.
    up: vec4<f32>,
    // xyz: unit direction towards the light.
    light_dir: vec4<f32>,
    // ambient, diffuse, specular, shadow (0 = off, 1 = on).
    shading: vec4<f32>,
    // x: shadow-map texel size (1 / resolution), y: depth bias.
    shadow: vec4<f32>,
}

@group(0) @binding(0) var<uniform> cam: Camera;
@group(1) @binding(0) var shadow_map: texture_depth_2d;
@group(1) @binding(1) var shadow_sampler: sampler_comparison;

// ---- lighting ----------------------------------------------------------------------------

// 1 where lit, 0 in shadow, 3×3 percentage-closer filtered. The level-0 compare sample
// needs no derivatives, so it may sit in non-uniform control flow (after discards).
fn lit_fraction(p: vec3<f32>) -> f32 {
    if cam.shading.w == 0.0 {
        return 1.0;
    }
    let c = cam.light_view_proj * vec4<f32>(p, 1.0);
    let ndc = c.xyz / c.w;
    let uv = vec2<f32>(ndc.x * 0.5 + 0.5, 0.5 - ndc.y * 0.5);
    if any(uv < vec2<f32>(0.0)) || any(uv > vec2<f32>(1.0)) || ndc.z > 1.0 {
        return 1.0;
    }
    var sum = 0.0;
    for (var i = -1; i <= 1; i++) {
        for (var j = -1; j <= 1; j++) {
            let o = vec2<f32>(f32(i), f32(j)) * cam.shadow.x;
            sum += textureSampleCompareLevel(shadow_map, shadow_sampler, uv + o, ndc.z - cam.shadow.y);
        }
    }
    return sum / 9.0;
}

// Ambient + Lambert + Blinn-Phong with the viewing direction `v` (towards the eye).
fn shade(base: vec3<f32>, n: vec3<f32>, v: vec3<f32>, lit: f32) -> vec3<f32> {
    let l = cam.light_dir.xyz;
    let diffuse = max(dot(n, l), 0.0);
    let h = normalize(l + v);
    let spec = select(0.0, pow(max(dot(n, h), 0.0), 48.0), diffuse > 0.0);
    let c = base * (cam.shading.x + cam.shading.y * diffuse * lit) + vec3<f32>(cam.shading.z * spec * lit);
    return clamp(c, vec3<f32>(0.0), vec3<f32>(1.0));
}

// A ray from the camera through world point `p`: (origin, unit direction).
fn camera_ray(p: vec3<f32>) -> array<vec3<f32>, 2> {
    if cam.eye.w > 0.5 {
        return array<vec3<f32>, 2>(cam.eye.xyz, normalize(p - cam.eye.xyz));
    }
    return array<vec3<f32>, 2>(p, cam.forward.xyz);
}

// ---- spheres -----------------------------------------------------------------------------

struct SphereIn {
    @location(0) center_radius: vec4<f32>,
    @location(1) color: vec4<f32>,
}

struct SphereOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) @interpolate(flat) center_radius: vec4<f32>,
    @location(2) @interpolate(flat) color: vec4<f32>,
}

// A quad perpendicular to the ray towards the centre that just holds the silhouette: the
// tangent cone of half-angle asin(r/d) cuts that plane in a circle of radius r·d/√(d²−r²).
@vertex
fn vs_sphere(@builtin(vertex_index) vi: u32, s: SphereIn) -> SphereOut {
    var corners = array<vec2<f32>, 6>(
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, -1.0), vec2<f32>(1.0, 1.0),
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, 1.0), vec2<f32>(-1.0, 1.0),
    );
    let c = s.center_radius.xyz;
    let r = s.center_radius.w;
    var axis = cam.forward.xyz;
    var half = r;
    var out: SphereOut;
    if cam.eye.w > 0.5 {
        let to_c = c - cam.eye.xyz;
        let d = length(to_c);
        if d <= r * 1.0001 {
            // The eye is inside this sphere: draw nothing (a degenerate triangle).
            out.clip = vec4<f32>(0.0, 0.0, 2.0, 1.0);
            return out;
        }
        axis = to_c / d;
        // 1 % slack: the quad is a bound, the fragment shader cuts the exact outline.
        half = 1.01 * r * d / sqrt(d * d - r * r);
    } else {
        half = 1.01 * r;
    }
    let right = normalize(cross(axis, cam.up.xyz));
    let up = cross(right, axis);
    let k = corners[vi];
    let p = c + (right * k.x + up * k.y) * half;
    out.clip = cam.view_proj * vec4<f32>(p, 1.0);
    out.world = p;
    out.center_radius = s.center_radius;
    out.color = s.color;
    return out;
}

struct Hit {
    p: vec3<f32>,
    n: vec3<f32>,
    v: vec3<f32>,
}

// Exact ray-sphere intersection; the discriminant from the perpendicular offset h keeps
// f32 precision when the sphere is far away (no d² − d² cancellation).
fn hit_sphere(world: vec3<f32>, cr: vec4<f32>) -> Hit {
    let ray = camera_ray(world);
    let oc = ray[0] - cr.xyz;
    let b = dot(oc, ray[1]);
    let h = oc - b * ray[1];
    let disc = cr.w * cr.w - dot(h, h);
    if disc < 0.0 {
        discard;
    }
    let t = -b - sqrt(disc);
    let p = ray[0] + t * ray[1];
    return Hit(p, (p - cr.xyz) / cr.w, -ray[1]);
}

fn clip_depth(p: vec3<f32>, m: mat4x4<f32>) -> f32 {
    let c = m * vec4<f32>(p, 1.0);
    return c.z / c.w;
}

struct ColorDepth {
    @location(0) color: vec4<f32>,
    @builtin(frag_depth) depth: f32,
}

@fragment
fn fs_sphere(i: SphereOut) -> ColorDepth {
    let hit = hit_sphere(i.world, i.center_radius);
    var o: ColorDepth;
    o.color = vec4<f32>(shade(i.color.rgb, hit.n, hit.v, lit_fraction(hit.p)), 1.0);
    o.depth = clip_depth(hit.p, cam.view_proj);
    return o;
}

// Shadow pass: the same impostor seen from the light (an orthographic camera).
@fragment
fn fs_sphere_depth(i: SphereOut) -> @builtin(frag_depth) f32 {
    let hit = hit_sphere(i.world, i.center_radius);
    return clip_depth(hit.p, cam.view_proj);
}

// ---- surfaces (boundaries, force chains) -------------------------------------------------

struct SurfaceIn {
    @location(0) pos: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) color: vec4<f32>,
    // Opacity seen from the side the normal points to (x) and from the other side (y).
    @location(3) alpha: vec2<f32>,
}

struct SurfaceOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) color: vec4<f32>,
    @location(3) alpha: vec2<f32>,
}

@vertex
fn vs_surface(s: SurfaceIn) -> SurfaceOut {
    var o: SurfaceOut;
    o.clip = cam.view_proj * vec4<f32>(s.pos, 1.0);
    o.world = s.pos;
    o.normal = s.normal;
    o.color = s.color;
    o.alpha = s.alpha;
    return o;
}

// Two-sided: the normal is flipped to face the viewer; the side seen picks the opacity, so
// a container's near walls can be faint and its far walls (seen from inside) solid.
@fragment
fn fs_surface(i: SurfaceOut) -> @location(0) vec4<f32> {
    let v = -camera_ray(i.world)[1];
    var n = normalize(i.normal);
    var a = i.alpha.x;
    if dot(n, v) < 0.0 {
        n = -n;
        a = i.alpha.y;
    }
    if a <= 0.0 {
        discard;
    }
    return vec4<f32>(shade(i.color.rgb, n, v, lit_fraction(i.world)), a);
}

// Shadow pass of the body triangles (boxes, capsules): depth only.
@fragment
fn fs_surface_depth(i: SurfaceOut) {
}
