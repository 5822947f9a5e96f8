"""The five-stage recognition pipeline, run as grip-host runs it (host-example/pipeline.c): describe every model
and the scene, index all the models' descriptors tagged by model, match the scene against the index, group the
correspondences into pose hypotheses, verify each against the scene."""

import difflib
import os
import time
from dataclasses import dataclass, field
from typing import List

import numpy as np

from . import _abi
from . import config as _config
from ._errors import ConfigError, GripError
from ._plugin import Plugin, load_plugin
from .cloud import Cloud, _is_open3d, as_cloud


@dataclass
class Instance:
    """One pose hypothesis with its verdict. ``pose`` is 4 x 4 (float64, model -> scene; the refined pose when it
    was verified); ``correspondences`` the hypothesis' member count, ``members`` their indices into
    Result.matches; ``violation`` is NaN when not measured; ``rejected_by`` is "" when accepted, else the verify key
    whose test rejected it (grip.Verdict)."""
    model: int
    model_name: str
    pose: np.ndarray
    correspondences: int
    votes: float
    fitness: float = float("nan")
    rmse: float = float("nan")
    violation: float = float("nan")
    accepted: bool = False
    rejected_by: str = "unspecified"
    members: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint32), repr=False)


@dataclass
class Correspondences:
    """The match stage's output: scene keypoint (``query``), the model's keypoint number (``reference``),
    ``model_id`` and squared descriptor distance ``sqdist``, sorted by query, best first."""
    query: np.ndarray
    reference: np.ndarray
    model_id: np.ndarray
    sqdist: np.ndarray

    def __len__(self):
        return len(self.query)


@dataclass
class Result:
    """What one run found. ``instances`` are the accepted hypotheses, ``hypotheses`` all of them in the group
    stage's order; keypoints are float32 k x 3 (their indices into each cloud beside them); ``timings_ms`` has one
    entry per stage and "total", measured around the plugin's calls as grip-host measures them."""
    instances: List[Instance]
    hypotheses: List[Instance]
    correspondences: int
    matches: Correspondences
    model_names: List[str]
    model_keypoints: List[np.ndarray]
    model_keypoint_indices: List[np.ndarray]
    scene_keypoints: np.ndarray
    scene_keypoint_indices: np.ndarray
    timings_ms: dict

    def to_dict(self):
        """The document of ``grip-host run --json`` (accepted instances, rejected hypotheses with what rejected
        them, less grip-host's sentence saying why, counts, timings)."""
        def instance(h):
            d = {"model": h.model, "model_name": h.model_name, "pose": [float(v) for v in h.pose.reshape(-1)],
                 "correspondences": h.correspondences, "votes": h.votes, "fitness": h.fitness, "rmse": h.rmse}
            if not np.isnan(h.violation):
                d["violation"] = h.violation
            return d
        rejected = [{"hypothesis": i, "model": h.model, "model_name": h.model_name, "fitness": h.fitness,
                     "rmse": h.rmse, "rejected_by": h.rejected_by} for i, h in enumerate(self.hypotheses)
                    if not h.accepted]
        return {"instances": [instance(h) for h in self.instances], "rejected": rejected,
                "counts": {"model_keypoints": [len(k) for k in self.model_keypoints],
                           "scene_keypoints": len(self.scene_keypoints), "correspondences": self.correspondences,
                           "hypotheses": len(self.hypotheses)},
                "timings_ms": dict(self.timings_ms)}


class Pipeline:
    """The five stages, configured once and run on any number of model/scene sets.

    config     an INI file's path (grip-host's format, e.g. configs/pcl_tutorial.conf), a dict
               {section: {key: value}}, or None for every stage's defaults
    overrides  a dict of the same form, or "section.key=value" strings (grip-host's --set), applied over config
    plugin     a grip.Plugin, or the plugin's path; None: found as grip.find_plugin() says

    Configuration problems raise ConfigError (a GripError with status ECONFIG) listing each one with the plugin's
    own text. Close the pipeline (or use ``with``) to free its stages and contexts at once.
    """

    def __init__(self, config=None, overrides=None, plugin=None):
        self.config, folder = _config.load(config, overrides)
        default = plugin if isinstance(plugin, Plugin) else load_plugin(plugin)
        device, cuda_device, threads = _config.pipeline_settings(self.config)
        self._contexts = {}
        self.stages = {}
        try:
            self._create(default, folder, device, cuda_device, threads)
        except BaseException:
            self.close()
            raise
        self.plugin = default

    def _create(self, default, folder, device, cuda_device, threads):
        problems = []
        chosen = {}
        for kind in _abi.KINDS:
            keys = dict(self.config.get(kind, {}))
            impl, where = keys.pop("impl", None), keys.pop("plugin", None)
            plugin = default
            if where is not None:
                if not where:
                    problems.append(f"{kind}.plugin: empty value (expected the path of a plugin)")
                    continue
                plugin = load_plugin(os.path.join(folder, where))
            try:
                info = plugin.stage(kind, impl)
            except KeyError:
                have = [s.name for s in plugin.stages_of(kind)]
                if not have:
                    problems.append(f"{kind}: {plugin.path} offers no {kind} stage")
                else:
                    problems.append(f"{kind}.impl: unknown implementation '{impl}' (available: {', '.join(have)})"
                                    f"{_config._hint(impl, have)}")
                continue
            if device is not None and "device" not in keys and any(p.key == "device" for p in info.params):
                keys["device"] = device
            chosen[kind] = (plugin, info, keys)
        if problems:
            raise ConfigError(problems)
        for kind, (plugin, info, keys) in chosen.items():
            ctx = self._contexts.get(plugin.path)
            if ctx is None:
                ctx = self._contexts[plugin.path] = plugin.context(cuda_device, threads)
            try:
                self.stages[kind] = ctx.stage(kind, info.name, keys)
            except GripError as e:
                if e.status != _abi.ECONFIG:
                    raise
                known = [p.key for p in info.params]
                hints = [f"did you mean '{m[0]}' for '{k}'?" for k in keys if k not in known
                         for m in [difflib.get_close_matches(k, known, n=1, cutoff=0.6)] if m]
                problems.append(f"{kind} '{info.name}': {e.message}" + "".join(f"; {h}" for h in hints))
        if problems:
            raise ConfigError(problems)

    def stage(self, kind):
        """The configured :class:`grip.Stage` of `kind`."""
        return self.stages[kind]

    def close(self):
        """Frees the stages and contexts (later calls do nothing)."""
        for s in reversed(list(self.stages.values())):
            s.close()
        for c in self._contexts.values():
            c.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def recognise(self, models, scene, model_names=None):
        """Looks for every model in the scene. `models` is a list of clouds (numpy arrays N x 3 / H x W x 3
        float32, grip.Cloud, open3d PointCloud; one cloud alone is taken as a list of one), `scene` one cloud.
        Returns a :class:`Result`."""
        if isinstance(models, (np.ndarray, Cloud)) or _is_open3d(models):
            models = [models]
        names = list(model_names) if model_names is not None else None
        clouds = [as_cloud(m, name=names[i] if names else None) for i, m in enumerate(models)]
        if not clouds:
            raise ValueError("no model to look for (give at least one)")
        if names is not None and len(names) != len(clouds):
            raise ValueError(f"{len(names)} model names for {len(clouds)} models")
        names = names or [c.name or f"model {i}" for i, c in enumerate(clouds)]
        scene = as_cloud(scene)
        made = []  # every plugin object of this run, released when it ends whatever happens

        def keep(obj):
            made.append(obj)
            return obj

        timings = {}
        try:
            t0 = time.perf_counter()
            d = self.stages["descriptor"]
            model_features = [keep(f) for f in d.describe_many(clouds, "model")]
            scene_features = keep(d.describe(scene, "scene"))
            t1 = time.perf_counter()
            # one copy of the models' descriptors, as grip-host makes (none for a single model)
            views = [f._descriptor_view() for f in model_features]
            reference = np.concatenate(views) if len(views) > 1 else views[0]
            ids = np.concatenate([np.full(len(f), i, dtype=np.uint32) for i, f in enumerate(model_features)])
            t2 = time.perf_counter()
            index = keep(self.stages["index"].build(reference, ids))
            t3 = time.perf_counter()
            matches = keep(self.stages["match"].match(index, scene_features))
            t4 = time.perf_counter()
            hypotheses = keep(self.stages["group"].group(model_features, scene_features, matches))
            t5 = time.perf_counter()
            verdicts = keep(self.stages["verify"].verify(model_features, scene_features, hypotheses))
            t6 = time.perf_counter()
            del views, reference
            timings = {"descriptor": (t1 - t0) * 1e3, "index": (t3 - t2) * 1e3, "match": (t4 - t3) * 1e3,
                       "group": (t5 - t4) * 1e3, "verify": (t6 - t5) * 1e3}
            timings["total"] = sum(timings.values())
            return _collect(names, model_features, scene_features, matches, hypotheses, verdicts, timings)
        finally:
            for obj in reversed(made):
                obj.close()


def _collect(names, model_features, scene_features, matches, hypotheses, verdicts, timings):
    out = []
    for i, h in enumerate(hypotheses):
        if h.model_id >= len(names):
            raise GripError(f"group: hypothesis {i} names model {h.model_id}, but there are {len(names)} models")
        out.append(Instance(h.model_id, names[h.model_id], h.pose, len(h.members), h.votes, members=h.members))
    # a verdict says which hypothesis it judges: the ABI does not promise verdict i is about hypothesis i
    for j, v in enumerate(verdicts):
        if v.hypothesis >= len(out):
            raise GripError(f"verify: verdict {j} names hypothesis {v.hypothesis}, but there are {len(out)}")
        h = out[v.hypothesis]
        h.pose, h.fitness, h.rmse, h.violation, h.accepted = v.pose, v.fitness, v.rmse, v.violation, v.accepted
        h.rejected_by = v.rejected_by
    return Result(
        instances=[h for h in out if h.accepted], hypotheses=out, correspondences=len(matches),
        matches=Correspondences(matches.query, matches.reference, matches.model_id, matches.sqdist),
        model_names=names, model_keypoints=[f.keypoint_xyz for f in model_features],
        model_keypoint_indices=[f.keypoints for f in model_features],
        scene_keypoints=scene_features.keypoint_xyz, scene_keypoint_indices=scene_features.keypoints,
        timings_ms=timings)


def recognise(models, scene, config=None, overrides=None, plugin=None, model_names=None):
    """One run of a :class:`Pipeline` built for it: ``grip.recognise([milk], scene, "configs/pcl_tutorial.conf")``.
    To run several scenes, make the Pipeline once and call its recognise()."""
    with Pipeline(config, overrides, plugin) as p:
        return p.recognise(models, scene, model_names)
