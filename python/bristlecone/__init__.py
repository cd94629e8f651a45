"""Bristlecone: a GPU granular and many-body frictional contact engine, from Python.

Scenes come from scene files (``Scene.from_file``) or are built in code table by table
(``Scene().material(...)``, ``.body(...)``, ...) with the command line's validation; a
``Simulation`` steps one on a GPU adapter (Mesa's lavapipe without a GPU) and gives its state
and contacts as NumPy arrays. The manual's "Python" page lists every name.
"""

from ._native import SceneError, Scene, Simulation, adapters, render

__all__ = ["SceneError", "Scene", "Simulation", "adapters", "render"]
