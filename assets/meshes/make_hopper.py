#!/usr/bin/env python3
"""Writes hopper.obj: a conical hopper (cone from the orifice up to a cylindrical bin).

Local frame: axis +z, orifice of radius R_O at z = 0, cone up to radius R at z = H_CONE,
cylinder wall up to z = H_CONE + H_BIN. Open at the orifice and at the top. Triangles face
inwards (normals towards the axis), which is where the grains are.
Run: python3 assets/meshes/make_hopper.py > assets/meshes/hopper.obj
"""
import math

R_O, R, H_CONE, H_BIN, N = 0.012, 0.05, 0.045, 0.12, 48

rings = [(R_O, 0.0), (R, H_CONE), (R, H_CONE + H_BIN)]
print("# conical hopper: orifice r=%g m, bin r=%g m, cone h=%g m, bin h=%g m" % (R_O, R, H_CONE, H_BIN))
for r, z in rings:
    for k in range(N):
        a = 2 * math.pi * k / N
        print("v %.6f %.6f %.6f" % (r * math.cos(a), r * math.sin(a), z))
for ring in range(len(rings) - 1):
    for k in range(N):
        a0 = ring * N + k + 1
        a1 = ring * N + (k + 1) % N + 1
        b0, b1 = a0 + N, a1 + N
        # Counter-clockwise seen from inside (normal towards the axis).
        print("f %d %d %d" % (a0, b1, a1))
        print("f %d %d %d" % (a0, b0, b1))
