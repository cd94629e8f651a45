//! What collision hands the solver and what it reads: the contact record in the GPU layout,
//! the boundary and grain shape table, the collision settings, and the contact frame's tangent
//! basis that the kernels, the joint rows and the CPU twins share.

/// A static boundary's shape in its body's local frame (see the contract for conventions).
#[derive(Clone, Debug, PartialEq)]
pub enum BoundaryShape {
    /// Half-space: local +z is the outward normal, solid below z = 0.
    Plane,
    /// Bodies inside; walls at ±half_extents; `open_top` removes the +z wall.
    BoxContainer {
        half_extents: [f32; 3],
        open_top: bool,
    },
    SolidBox {
        half_extents: [f32; 3],
    },
    /// Axis local +z, base at z = 0; bodies inside.
    CylinderContainer {
        radius: f32,
        height: f32,
        open_top: bool,
    },
    SolidCylinder {
        radius: f32,
        height: f32,
    },
    /// Static in its local frame; two-sided (unsigned distance).
    Mesh {
        vertices: Vec<[f32; 3]>,
        triangles: Vec<[u32; 3]>,
    },
    /// Not a boundary: the shape of a box grain (body kind `SHAPE_BOX`, whose shape index
    /// points here), centred on the body, axes along the body frame.
    GrainBox {
        half_extents: [f32; 3],
    },
    /// Not a boundary: the shape of a capsule grain (body kind `SHAPE_CAPSULE`): a segment
    /// of half length `half_length` along the body's z axis, swept by a sphere of `radius`.
    GrainCapsule {
        radius: f32,
        half_length: f32,
    },
    /// Not a boundary: the member spheres of a clump grain (body kind `SHAPE_CLUMP`), centre
    /// xyz in the body frame (centre of mass, principal axes) and radius w.
    GrainClump {
        members: Vec<[f32; 4]>,
    },
    /// Not a boundary: the shape of a cylinder grain (body kind `SHAPE_CYLINDER`): axis
    /// along the body's z axis from −half_length to +half_length, `radius`.
    GrainCylinder {
        radius: f32,
        half_length: f32,
    },
    /// Not a boundary: a convex hull grain (body kind `SHAPE_CONVEX`), body frame
    /// (centre of mass, principal axes): vertices, face planes (outward n, offset d) and
    /// each face's vertex loop (`bristlecone_cpu::convex`).
    GrainConvex {
        vertices: Vec<[f32; 3]>,
        planes: Vec<[f32; 4]>,
        loops: Vec<Vec<u32>>,
    },
}

/// Tangent basis (u, w) of a contact's unit normal, in f64: the same formula as
/// `tangent_u`/`tangent_w` in `shaders/prelude.wgsl` (Duff et al. 2017).
pub fn tangent_basis(n: glam::DVec3) -> (glam::DVec3, glam::DVec3) {
    let s = if n.z >= 0.0 { 1.0 } else { -1.0 };
    let a = -1.0 / (s + n.z);
    let b = n.x * n.y * a;
    (
        glam::DVec3::new(1.0 + s * n.x * n.x * a, s * b, -s * n.x),
        glam::DVec3::new(b, s + n.y * n.y * a, -n.y),
    )
}

#[derive(Clone, Debug, PartialEq)]
pub struct CollideSettings {
    /// A contact is kept while its gap Φ ≤ envelope.
    pub envelope: f32,
    /// Friction coefficient μ per material index; a pair uses min(μ_A, μ_B).
    pub friction: Vec<f32>,
}

/// One contact, as the GPU stores it (64 bytes; see the contract).
#[repr(C)]
#[derive(bytemuck::Pod, bytemuck::Zeroable, Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactRecord {
    /// Unit normal from A to B, w = gap Φ.
    pub n_gap: [f32; 4],
    /// Contact point − centre of A, w = μ.
    pub ra: [f32; 4],
    /// Contact point − centre of B; w = 0 from collision (a patch block's radius; with APGD,
    /// assembly writes a contact's residual η there, see `shaders/solve_assemble.wgsl`).
    pub rb: [f32; 4],
    /// A, B, feature, (material A << 16) | material B.
    pub ids: [u32; 4],
}

impl ContactRecord {
    /// The sort and warm-start key (A, B, feature).
    pub fn key(&self) -> (u32, u32, u32) {
        (self.ids[0], self.ids[1], self.ids[2])
    }
}
