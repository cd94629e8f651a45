#!/usr/bin/env python3
"""Writes chute.obj: an inclined trough (flat floor between two sloping side walls).

World frame (the scene places it at the origin): the trough runs along +x from x = 0 to
x = L, falling at SLOPE; the floor is W wide, the walls rise H at 60 degrees. Open at both
ends and at the top. Triangles face into the trough (where the grains are).
Run: python3 assets/meshes/make_chute.py > assets/meshes/chute.obj
"""
import math

L, SLOPE, Z0, W, H, N = 0.6, math.radians(25.0), 0.32, 0.12, 0.07, 6

# Cross-section points (y, z above the floor), left wall top to right wall top.
run = H / math.tan(math.radians(60.0))
section = [(-W / 2 - run, H), (-W / 2, 0.0), (W / 2, 0.0), (W / 2 + run, H)]
print("# inclined trough: length %g m, slope %g deg, floor %g m, walls %g m" % (L, math.degrees(SLOPE), W, H))
for i in range(N + 1):
    x = L * i / N
    z = Z0 - x * math.tan(SLOPE)
    for y, dz in section:
        print("v %.6f %.6f %.6f" % (x, y, z + dz))
S = len(section)
for i in range(N):
    for k in range(S - 1):
        a = i * S + k + 1
        b = a + 1
        c, d = a + S, b + S
        # Counter-clockwise seen from inside the trough (normals up / inwards).
        print("f %d %d %d" % (a, d, b))
        print("f %d %d %d" % (a, c, d))
