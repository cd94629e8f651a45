"""Type stubs of the extension module (the Rust side of the package)."""

from os import PathLike
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union, overload

import numpy as np
import numpy.typing as npt

_Path = Union[str, PathLike]
_Vec = Union[Sequence[float], npt.NDArray[np.floating]]
_TomlValue = Union[bool, int, float, str, Sequence[Any], Dict[str, Any], npt.NDArray[Any]]

class SceneError(ValueError):
    """A scene the loader refuses: ``file:line:column: field: what is wrong``."""

class Scene:
    """A scene file's TOML document: loaded, or built table by table with the loader's checks."""

    def __init__(self) -> None: ...
    @staticmethod
    def from_file(path: _Path, scale: Optional[float] = None) -> "Scene": ...
    @staticmethod
    def from_toml(text: str, path: _Path = "scene.toml") -> "Scene": ...
    def simulation(self, **kwargs: _TomlValue) -> None: ...
    def solver(self, **kwargs: _TomlValue) -> None: ...
    def output(self, **kwargs: _TomlValue) -> None: ...
    def material(self, **kwargs: _TomlValue) -> int: ...
    def body(self, **kwargs: _TomlValue) -> int: ...
    def generator(self, **kwargs: _TomlValue) -> int: ...
    def boundary(self, **kwargs: _TomlValue) -> int: ...
    def joint(self, **kwargs: _TomlValue) -> int: ...
    def measure(self, **kwargs: _TomlValue) -> int: ...
    def validate(self) -> None: ...
    def to_toml(self) -> str: ...
    def write(self, path: _Path) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def n_bodies(self) -> int: ...

class Simulation:
    """A scene's simulation on a GPU adapter (lavapipe without a GPU)."""

    def __init__(self, scene: Scene, backend: str = "auto") -> None: ...
    @staticmethod
    def resume(scene: Scene, checkpoint: _Path, backend: str = "auto") -> "Simulation": ...
    def step(self, n: int = 1) -> None: ...
    @property
    def time(self) -> float: ...
    @property
    def step_index(self) -> int: ...
    def state(self) -> Dict[str, Any]:
        """positions (N,3) f32, orientations (N,4) f32, velocities (N,3) f32,
        angular_velocities (N,3) f32, ids/shape/motion/material (N,) u32, radius (N,) f32,
        sizes (N,3) f32; step, time, first_grain."""
    def contacts(self) -> Dict[str, npt.NDArray[Any]]:
        """body_a, body_b (M,) u32, points (M,3) f64, normals (M,3) f32, gaps (M,) f32,
        impulses (M,3) f32, forces (M,3) f64."""
    def stats(self) -> Optional[Dict[str, float]]: ...
    def measurements(self) -> Dict[str, Dict[str, npt.NDArray[np.float64]]]:
        """The scene's [[measure]] series so far: name -> column -> (samples,) float64, with
        "time" first, then the columns of the command line's measurements/NAME.csv."""
    def measurement_units(self) -> Dict[str, Dict[str, str]]:
        """The unit of every column of measurements(): name -> column -> unit."""
    def set_velocity(self, body: int, velocity: _Vec, angular_velocity: Optional[_Vec] = None) -> None: ...
    def set_kinematic_pose(self, body: int, position: _Vec, orientation: Optional[_Vec] = None) -> None: ...
    def set_gravity(self, gravity: _Vec) -> None: ...
    def set_friction(self, material: str, friction: float) -> None: ...
    def set_motor_target(self, joint: int, target: float) -> None: ...
    def checkpoint(self, path: _Path) -> None:
        """The command line's checkpoint format, carrying the parameters set since the scene
        (gravity, friction, motor targets) that a resume continues with."""
    def write_frame(self, dir: _Path) -> Path:
        """Every file bristlecone run writes at a frame of this step (particles, boundary and
        body surfaces, contacts, joints) into the run directory dir; the particle frame's path."""

def adapters(backend: str = "auto") -> List[Dict[str, str]]: ...
@overload
def render(
    source: Union[_Path, Simulation],
    path: None = None,
    *,
    camera: Optional[str] = None,
    eye: Optional[_Vec] = None,
    target: Optional[_Vec] = None,
    up: Optional[_Vec] = None,
    fov: Optional[float] = None,
    width: Optional[int] = None,
    height: Optional[int] = None,
    background: Optional[str] = None,
    color_by: Optional[str] = None,
    range: Optional[_Vec] = None,
    force_chains: Optional[bool] = None,
    shadows: Optional[bool] = None,
    supersample: Optional[int] = None,
    frame: Optional[int] = None,
    scene: Optional[_Path] = None,
    scale: Optional[float] = None,
    backend: str = "auto",
) -> npt.NDArray[np.uint8]:
    """A run directory's frame (default the last) or a simulation's current state drawn as
    bristlecone render draws it: an RGB array (height, width, 3)."""
@overload
def render(
    source: Union[_Path, Simulation],
    path: _Path,
    *,
    camera: Optional[str] = None,
    eye: Optional[_Vec] = None,
    target: Optional[_Vec] = None,
    up: Optional[_Vec] = None,
    fov: Optional[float] = None,
    width: Optional[int] = None,
    height: Optional[int] = None,
    background: Optional[str] = None,
    color_by: Optional[str] = None,
    range: Optional[_Vec] = None,
    force_chains: Optional[bool] = None,
    shadows: Optional[bool] = None,
    supersample: Optional[int] = None,
    frame: Optional[int] = None,
    scene: Optional[_Path] = None,
    scale: Optional[float] = None,
    backend: str = "auto",
) -> Path:
    """The same picture written to path as PNG (the command line's bytes); returns path."""
