//! `[[inflow]]` and `[[outflow]]` tables (see `crate::flow`).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::flow::{FlowRate, Inflow, Outflow, OutflowRegion, PoolGrain};

/// Random sequential addition of equal spheres jams at a solid fraction of about 0.38
/// (Torquato, Uche & Stillinger 2006); a wave may ask for at most this fraction of its
/// region's volume, so that its grains find room within their attempts.
const WAVE_FILL_LIMIT: f64 = 0.2;
/// Most grains one inflow's pool may hold.
const MAX_POOL: usize = 2_000_000;
/// Steps between insertion waves and between removals, unless `every` says otherwise.
const DEFAULT_EVERY: u64 = 10;
const DEFAULT_ATTEMPTS: u64 = 100;

/// Both kinds of table.
pub(super) fn flow_section(
    cx: &Cx<'_>,
    raw: &RawScene,
    materials: &[Material],
    boundaries: &[Boundary],
    sim: &SimSettings,
    scale: f64,
) -> R<(Vec<Inflow>, Vec<Outflow>)> {
    let mut inflows = Vec::new();
    for (i, t) in raw.inflow.iter().enumerate() {
        let base = format!("inflow[{i}]");
        inflows.push(inflow(cx, t, &base, materials, boundaries, (sim, scale))?);
    }
    let mut outflows = Vec::new();
    for (i, t) in raw.outflow.iter().enumerate() {
        outflows.push(outflow(cx, t, &format!("outflow[{i}]"))?);
    }
    Ok((inflows, outflows))
}

/// Inflows and outflows name their measurement files: valid names, distinct from each
/// other and from the `[[measure]]` names.
pub(super) fn names_distinct(cx: &Cx<'_>, raw: &RawScene, measures: &[Measure]) -> R<()> {
    let mut names: HashMap<String, usize> = measures
        .iter()
        .zip(&raw.measure)
        .map(|(m, r)| (m.name.clone(), cx.line(&r.get_ref().name.span())))
        .collect();
    let tables = raw
        .inflow
        .iter()
        .map(|t| ("inflow", &t.get_ref().name))
        .enumerate()
        .chain(
            raw.outflow
                .iter()
                .map(|t| ("outflow", &t.get_ref().name))
                .enumerate(),
        );
    for (i, (kind, name)) in tables {
        let base = format!("{kind}[{i}]");
        let n = name.get_ref().clone();
        if n.is_empty()
            || !n
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(cx.err(
                Some(name.span()),
                format!("{base}.name"),
                format!("`{n}` is not a valid name (it names the file measurements/NAME.csv: use letters, digits, `_` and `-`)"),
            ));
        }
        if let Some(line) = names.get(&n) {
            return Err(cx.err(
                Some(name.span()),
                format!("{base}.name"),
                format!(
                    "`{n}` is already the name of a measurement, inflow or outflow (line {line})"
                ),
            ));
        }
        names.insert(n, cx.line(&name.span()));
    }
    Ok(())
}

fn inflow(
    cx: &Cx<'_>,
    t: &S<RawInflow>,
    base: &str,
    materials: &[Material],
    boundaries: &[Boundary],
    (sim, scale): (&SimSettings, f64),
) -> R<Inflow> {
    let span = t.span();
    let f = t.get_ref();
    let region = region(cx, &f.region, &format!("{base}.region"))?;
    let dist = radius_dist(cx, &f.radius, &format!("{base}.radius"))?;
    if let Some(r) = [dist.min(), dist.max()]
        .into_iter()
        .find(|&r| !mass_fits_gpu_pair(sphere_mass(REFERENCE_DENSITY, r)))
    {
        return Err(cx.err(
            Some(f.radius.span()),
            format!("{base}.radius"),
            format!("grains of radius {} m have a mass or moment of inertia that the GPU's 32-bit floats cannot hold", Num(r)),
        ));
    }
    if !region.fits_radius(dist.max()) {
        return Err(cx.err(
            Some(f.region.span()),
            format!("{base}.region"),
            format!("is too small for a grain of radius {} m", Num(dist.max())),
        ));
    }
    // The pool is parked at the region's centre: the region's precision is the pool's.
    if let Some(m) = super::super::precision::check_region(&region, &dist) {
        return Err(cx.err(Some(f.region.span()), format!("{base}.region"), m));
    }
    inside_domain(cx, &region, dist.max(), boundaries, &f.region, base)?;
    // `--scale` below 1 scales the rate and the pool as it scales a generator's count.
    let scale = scale.min(1.0);
    let rate = match (&f.rate, &f.mass_rate) {
        (Some(r), None) => FlowRate::Grains(cx.positive(r, &format!("{base}.rate"))? * scale),
        (None, Some(r)) => FlowRate::Mass(cx.positive(r, &format!("{base}.mass_rate"))? * scale),
        (Some(_), Some(r)) => {
            return Err(cx.err(
                Some(r.span()),
                format!("{base}.mass_rate"),
                "give `rate` (grains/s) or `mass_rate` (kg/s), not both",
            ))
        }
        (None, None) => {
            return Err(cx.err(
                Some(span),
                format!("{base}.rate"),
                "missing field `rate` (grains/s) or `mass_rate` (kg/s)",
            ))
        }
    };
    let fractions = material_fractions(cx, f, &span, base, materials)?;
    let seed = cx.opt_int(&f.seed, &format!("{base}.seed"), 0, i64::MAX, 0)?;
    let every = cx.opt_int(
        &f.every,
        &format!("{base}.every"),
        1,
        i64::MAX,
        DEFAULT_EVERY,
    )?;
    let count = match &f.count {
        Some(c) => {
            let n = cx.int_range(c, &format!("{base}.count"), 1, MAX_POOL as i64)? as usize;
            Some(scaled_count(n, scale))
        }
        None => None,
    };
    let duration = sim.steps as f64 * sim.dt;
    let pool = draw_pool(&dist, &fractions, materials, seed, rate, duration, count);
    if pool.len() > MAX_POOL {
        return Err(cx.err(
            Some(span),
            format!("{base}.count"),
            format!("the rate over the run's {} s needs more than {MAX_POOL} grains: set `count`, the most grains of this inflow in the scene at once", Num(duration)),
        ));
    }
    wave_fits(cx, f, base, &region, &pool, rate, every as f64 * sim.dt)?;
    let spread = |v: &O<f64>, k: &str| cx.opt_non_negative(v, &format!("{base}.{k}"), 0.0);
    Ok(Inflow {
        name: f.name.get_ref().clone(),
        region,
        rate,
        velocity: vel(&f.velocity),
        velocity_spread: spread(&f.velocity_spread, "velocity_spread")?,
        angular_velocity: vel(&f.angular_velocity),
        angular_velocity_spread: spread(&f.angular_velocity_spread, "angular_velocity_spread")?,
        seed,
        every,
        max_attempts: cx.opt_int(
            &f.max_attempts,
            &format!("{base}.max_attempts"),
            1,
            1_000_000,
            DEFAULT_ATTEMPTS,
        )? as u32,
        pool,
    })
}

/// `material` or `material_fractions` (cumulative probabilities, one per material index).
fn material_fractions(
    cx: &Cx<'_>,
    f: &RawInflow,
    span: &Range<usize>,
    base: &str,
    materials: &[Material],
) -> R<Vec<(usize, f64)>> {
    let Some(fr) = &f.material_fractions else {
        return Ok(vec![(
            cx.material(&f.material, span, base, materials)?,
            1.0,
        )]);
    };
    let path = format!("{base}.material_fractions");
    if let Some(m) = &f.material {
        return Err(cx.err(
            Some(m.span()),
            format!("{base}.material"),
            "give `material` or `material_fractions`, not both",
        ));
    }
    let mut out = Vec::new();
    let mut sum = 0.0;
    for (name, x) in fr.get_ref() {
        let p = format!("{path}.{name}");
        let Some(k) = materials.iter().position(|m| m.name == *name) else {
            return Err(cx.err(Some(x.span()), p, format!("unknown material `{name}`")));
        };
        sum += cx.positive(x, &p)?;
        out.push((k, sum));
    }
    if out.is_empty() || (sum - 1.0).abs() > 1e-6 {
        return Err(cx.err(
            Some(fr.span()),
            path,
            format!(
                "the fractions must add up to 1 (they add up to {})",
                Num(sum)
            ),
        ));
    }
    Ok(out)
}

/// The grains an inflow inserts, in order: the run's need at its rate (plus one), or
/// `count` grains.
fn draw_pool(
    dist: &RadiusDist,
    fractions: &[(usize, f64)],
    materials: &[Material],
    seed: u64,
    rate: FlowRate,
    duration: f64,
    count: Option<usize>,
) -> Vec<PoolGrain> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut pool = Vec::new();
    let mut mass = 0.0;
    loop {
        let enough = match (count, rate) {
            (Some(n), _) => pool.len() >= n,
            (None, FlowRate::Grains(r)) => pool.len() as f64 > r * duration,
            (None, FlowRate::Mass(r)) => mass > r * duration,
        };
        if enough || pool.len() > MAX_POOL {
            return pool;
        }
        let radius = dist.draw(&mut rng);
        let u: f64 = rng.random();
        let material = fractions
            .iter()
            .find(|(_, cum)| u < *cum)
            .unwrap_or(&fractions[fractions.len() - 1])
            .0;
        let (m, i) = sphere_mass(materials[material].density, radius);
        mass += m;
        pool.push(PoolGrain {
            radius,
            material,
            mass: m,
            inertia: i[0],
        });
    }
}

/// A wave (the grains due over `wave_s` seconds) must fill at most [`WAVE_FILL_LIMIT`] of
/// the region's volume.
fn wave_fits(
    cx: &Cx<'_>,
    f: &RawInflow,
    base: &str,
    region: &Region,
    pool: &[PoolGrain],
    rate: FlowRate,
    wave_s: f64,
) -> R<()> {
    let n = pool.len().max(1) as f64;
    let mean_volume = pool
        .iter()
        .map(|g| 4.0 / 3.0 * PI * g.radius.powi(3))
        .sum::<f64>()
        / n;
    let mean_mass = pool.iter().map(|g| g.mass).sum::<f64>() / n;
    let (per_wave, field) = match rate {
        FlowRate::Grains(r) => (r * wave_s, (&f.rate, "rate")),
        FlowRate::Mass(r) => (r * wave_s / mean_mass, (&f.mass_rate, "mass_rate")),
    };
    let fill = (per_wave.ceil() * mean_volume) / region.volume();
    if fill > WAVE_FILL_LIMIT {
        return Err(cx.err(
            field.0.as_ref().map(|s| s.span()),
            format!("{base}.{}", field.1),
            format!(
                "the region cannot place this rate without overlap: each wave ({} grains every \
                 {} s) would fill {:.0} % of its volume, and random placement jams near 38 % \
                 (at most {:.0} % is allowed): enlarge the region or lower `every`",
                per_wave.ceil(),
                Num(wave_s),
                100.0 * fill,
                100.0 * WAVE_FILL_LIMIT
            ),
        ));
    }
    Ok(())
}

/// The region lies on the open side of every plane and, when the scene has containers, in
/// one of them (an open top extends a container upwards).
fn inside_domain(
    cx: &Cx<'_>,
    region: &Region,
    r_max: f64,
    boundaries: &[Boundary],
    field: &S<crate::raw::RawRegion>,
    base: &str,
) -> R<()> {
    let (lo, hi) = region.aabb();
    let corners: Vec<[f64; 3]> = (0..8)
        .map(|c| [0, 1, 2].map(|k| if c & (1 << k) != 0 { hi[k] } else { lo[k] }))
        .collect();
    let fail = |why: String| cx.err(Some(field.span()), format!("{base}.region"), why);
    for (bi, bd) in boundaries.iter().enumerate() {
        if bd.shape == BoundaryShape::Plane
            && corners.iter().any(|&p| boundary_local(bd, p).z < r_max)
        {
            return Err(fail(format!(
                "reaches into the solid side of plane `{}` (boundary[{bi}]): grains placed there would start inside it",
                bd.name
            )));
        }
    }
    let in_container = |bd: &Boundary| corners.iter().all(|&p| inside_container(bd, p));
    let containers: Vec<&Boundary> = boundaries
        .iter()
        .filter(|b| {
            matches!(
                b.shape,
                BoundaryShape::BoxContainer { .. } | BoundaryShape::CylinderContainer { .. }
            )
        })
        .collect();
    if !containers.is_empty() && !containers.iter().any(|bd| in_container(bd)) {
        return Err(fail(format!(
            "is not inside any container ({}): grains placed there would start outside the domain",
            containers
                .iter()
                .map(|b| format!("`{}`", b.name))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(())
}

fn outflow(cx: &Cx<'_>, t: &S<RawOutflow>, base: &str) -> R<Outflow> {
    let span = t.span();
    let f = t.get_ref();
    let region = match (&f.region, &f.point, &f.normal) {
        (Some(r), None, None) => OutflowRegion::Region(region(cx, r, &format!("{base}.region"))?),
        (None, Some(p), Some(n)) => OutflowRegion::HalfSpace {
            point: *p.get_ref(),
            normal: cx
                .direction(n, &format!("{base}.normal"), "normal")?
                .to_array(),
        },
        (Some(_), Some(s), _) | (Some(_), _, Some(s)) => {
            return Err(cx.err(
                Some(s.span()),
                base,
                "give `region`, or `point` and `normal` (a half-space), not both",
            ))
        }
        (None, Some(_), None) => {
            return Err(cx.err(
                Some(span),
                format!("{base}.normal"),
                "missing field `normal` (the half-space with `point`)",
            ))
        }
        (None, None, _) => {
            return Err(cx.err(
                Some(span),
                format!("{base}.region"),
                "missing field `region` (or `point` and `normal`: a half-space)",
            ))
        }
    };
    Ok(Outflow {
        name: f.name.get_ref().clone(),
        region,
        every: cx.opt_int(
            &f.every,
            &format!("{base}.every"),
            1,
            i64::MAX,
            DEFAULT_EVERY,
        )?,
    })
}
