"""grip: GPU recognition in point clouds, from Python.

A pure-Python binding (ctypes) to the grip plugin, libgrip.so, through its C ABI (plugin.h)::

    import grip
    from grip.pcd import read_pcd

    milk = read_pcd("milk.pcd")
    scene = read_pcd("milk_cartoon_all_small_clorox.pcd")
    result = grip.recognise([milk], scene, config="configs/pcl_tutorial.conf")
    for inst in result.instances:
        print(inst.model_name, inst.fitness, inst.pose)

Clouds are numpy arrays (N x 3 or H x W x 3 float32), :class:`Cloud` (with normals, colours, viewpoint) or
open3d PointClouds. The plugin is found as :func:`find_plugin` says: an explicit path, $GRIP_PLUGIN, the path
recorded at install, pkg-config, the usual places.

Layers: :class:`Pipeline` / :func:`recognise` run the five stages as grip-host does; :class:`Plugin` lists the
stages and their parameter tables; ``plugin.context()`` and ``context.stage(kind, impl, params)`` give each stage
alone (describe, build, match, group, verify). Failed calls raise :class:`GripError` (status, the plugin's
last-error text). Every plugin object is released once, by close(), ``with`` or garbage collection.
"""

from ._abi import ABI_MAJOR, ABI_MINOR, KINDS
from ._errors import ConfigError, GripError, PluginLoadError, PluginNotFoundError, Status
from ._objects import (Context, Features, Hypotheses, Hypothesis, Index, Matches, Stage, Verdict, Verdicts)
from ._plugin import Param, Plugin, StageInfo, find_plugin, load_plugin
from .cloud import Cloud, as_cloud
from .config import PIPELINE_PARAMS, read_config
from .pipeline import Correspondences, Instance, Pipeline, Result, recognise

__version__ = "0.1.0"

__all__ = [
    "ABI_MAJOR", "ABI_MINOR", "KINDS", "PIPELINE_PARAMS",
    "GripError", "ConfigError", "PluginLoadError", "PluginNotFoundError", "Status",
    "Plugin", "StageInfo", "Param", "find_plugin", "load_plugin",
    "Context", "Stage", "Features", "Index", "Matches", "Hypotheses", "Hypothesis", "Verdicts", "Verdict",
    "Cloud", "as_cloud", "read_config",
    "Pipeline", "Result", "Instance", "Correspondences", "recognise",
]
