//! The friction and contact models a material selects (parsed from the scene file by the
//! app crate; `crate::solve::rows` turns one into its rows).

/// Friction and contact model. Coulomb, compliant, Hunt–Crossley and bristle are solved; the
/// scene builder rejects the others (see `crate::solve::rows`).
#[derive(Debug, Clone, PartialEq)]
pub enum FrictionModel {
    Coulomb,
    Bristle {
        stiffness: f64,
    },
    /// Bristle friction with the paper's per-component box |γ_u|, |γ_w| ≤ μ γ_n⁻ as its
    /// projection (`projection = "box"`; `crate::solve::rows::MODEL_BRISTLE`).
    BristleBox {
        stiffness: f64,
    },
    Compliant {
        stiffness: f64,
        damping: f64,
    },
    /// Hunt–Crossley normal force F = k δⁿ (1 + 3/2 α δ̇): stiffness k (N/mⁿ), exponent n ≥ 1,
    /// damping α (s/m).
    HuntCrossley {
        stiffness: f64,
        exponent: f64,
        damping: f64,
    },
    /// Kelvin–Voigt with the damping given as a coefficient of restitution e (the damping
    /// ratio ζ(e) of the spring–damper without adhesion; c = 2ζ√(k m*) per contact, see
    /// `crate::solve::rows::compliant`).
    CompliantRestitution {
        stiffness: f64,
        restitution: f64,
    },
    /// Hunt–Crossley from physical quantities: Hertz stiffness k = 4/3 E* √R* (n = 1.5) per
    /// contact from Young's modulus E (Pa) and Poisson ratio ν, and the damping from the
    /// restitution e at the contact's impact speed (`crate::solve::rows::compliant`).
    HuntCrossleyHertz {
        youngs_modulus: f64,
        poisson_ratio: f64,
        restitution: f64,
    },
    Tanh {
        slip_velocity: f64,
    },
    LuGre {
        sigma0: f64,
        sigma1: f64,
        sigma2: f64,
        mu_static: f64,
        v_stribeck: f64,
        /// The elasto-plastic variant (Dupont et al. 2002, as Arslan Waltersson & Karayiannidis eqs. 16–18) with break-away
        /// deflection z_ba = ratio × z_ss, ratio in (0, 1); None: plain LuGre.
        breakaway_ratio: Option<f64>,
    },
    /// The reduced planar LuGre model on face–face contact patches (book: Contact patches,
    /// `crate::patch::couple`), parameters as LuGre's (per unit normal load).
    LuGreReduced {
        sigma0: f64,
        sigma1: f64,
        sigma2: f64,
        mu_static: f64,
        v_stribeck: f64,
    },
    /// The distributed planar LuGre model (Arslan Waltersson & Karayiannidis) on face–face contact patches (issue
    /// #11, `crate::patch::stage`): a `cells × cells` grid of bristles per patch, stepped on
    /// the GPU; parameters as LuGre's (per unit normal load).
    LuGrePatch {
        sigma0: f64,
        sigma1: f64,
        sigma2: f64,
        mu_static: f64,
        v_stribeck: f64,
        breakaway_ratio: Option<f64>,
        cells: u32,
    },
}
