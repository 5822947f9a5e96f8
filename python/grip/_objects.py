"""Contexts, stages and the objects stages return, each owning one plugin object.

Lifetime. Every wrapper releases its plugin object exactly once: through close() (also called by ``with``), or
when Python collects it (weakref.finalize), or at interpreter exit, whichever comes first. A stage and every result
keep their context alive, and closing a context closes first whatever was made from it, so a plugin object is
never used or released after the context it borrows. Using a closed wrapper raises ValueError.

Threading. plugin.h lets one thread at a time use a context and what was made from it; every call, releases
included (which the garbage collector may run on any thread), holds the context's lock. Calls release the GIL.
"""

import ctypes
import threading
import weakref

import numpy as np

from . import _abi
from ._errors import GripError
from ._plugin import _check_kind
from .cloud import as_cloud

_NUMPY = {_abi.F32: np.float32, _abi.U32: np.uint32, _abi.I32: np.int32, _abi.U8: np.uint8}
_ROLES = {"model": _abi.ROLE_MODEL, "scene": _abi.ROLE_SCENE}


def _kv_string(value):
    """A parameter value as a config file writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _view_array(a, what, dtype=None):
    """A numpy view (no copy) of a plugin's host array, rows x cols, valid while the object holding it lives;
    rows == 0 gives an empty array."""
    if a.rows == 0:
        return np.empty((0, a.cols), dtype=_NUMPY.get(a.dtype, np.float32))
    if a.memory != _abi.MEM_HOST:
        raise GripError(f"{what}: the plugin returned device memory where host memory was asked for")
    if a.dtype not in _NUMPY or (dtype is not None and a.dtype != dtype):
        raise GripError(f"{what}: unexpected element type {a.dtype}")
    t = _NUMPY[a.dtype]
    count = int(a.rows) * int(a.cols)
    buf = (ctypes.c_byte * (count * np.dtype(t).itemsize)).from_address(a.data)
    return np.frombuffer(buf, dtype=t).reshape(int(a.rows), int(a.cols))


def _copy_array(a, what, dtype=None):
    """A numpy copy of a plugin's host array."""
    return _view_array(a, what, dtype).copy()


class _Owned:
    """A wrapper that owns one plugin object of `context`, released by `release(pointer)` exactly once."""

    def __init__(self, context, pointer, release, what):
        self._context = context
        self._ptr = pointer
        self._what = what
        # the wrapper holds its context, so the context outlives it; should both be collected at once, the context's
        # finalizer runs this one first. The finalizer must not hold self, or self would never be collected.
        self._finalizer = weakref.finalize(self, _release, context._lock, release, pointer)
        context._adopt(self._finalizer)

    @property
    def context(self):
        return self._context

    @property
    def closed(self):
        return not self._finalizer.alive

    def _pointer(self):
        if not self._finalizer.alive:
            raise ValueError(f"{self._what} is closed")
        return self._ptr

    def close(self):
        """Releases the plugin object now (later calls do nothing)."""
        self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _release(lock, release, pointer):
    with lock:
        release(pointer)


class Context:
    """A grip_ctx: the CUDA device the stages use, CPU threads, the device memory pool and the last-error text.
    Make one with ``plugin.context()``; close it (or use ``with``) to free it and everything made from it."""

    def __init__(self, plugin, device_ordinal=-1, threads=0):
        self.plugin = plugin
        self._lock = threading.RLock()
        self._children = []
        opts = _abi.CtxOptions(ctypes.sizeof(_abi.CtxOptions), int(device_ordinal), int(threads))
        out = ctypes.c_void_p()
        status = plugin._table.ctx_create(ctypes.byref(opts), ctypes.byref(out))
        if status != _abi.OK or not out.value:
            raise GripError("cannot create a context", status, plugin.status_str(status))
        self._ptr = out.value
        self._finalizer = weakref.finalize(self, _destroy_context, self._lock, plugin._table.ctx_destroy,
                                           self._ptr, self._children)

    def _adopt(self, finalizer):
        with self._lock:
            if len(self._children) > 64:
                self._children[:] = [f for f in self._children if f.alive]
            self._children.append(finalizer)

    def _pointer(self):
        if not self._finalizer.alive:
            raise ValueError("the grip context is closed")
        return self._ptr

    @property
    def closed(self):
        return not self._finalizer.alive

    @property
    def last_error(self):
        """The context's last-error text ("" if none)."""
        with self._lock:
            return _abi_text(self.plugin._table.ctx_last_error(self._pointer()))

    def device_count(self):
        """Usable CUDA devices (0 on a CPU-only build, without a driver, or when the plugin cannot say)."""
        t = self.plugin._table
        if not t.device_count:
            return 0
        with self._lock:
            return int(t.device_count(self._pointer()))

    def stats(self):
        """The context's counters (grip_ctx_stats, ABI 1.2) as a dict: ``device`` (the CUDA ordinal it uses, -1
        before its first device use), bytes and copies each way (``h2d_bytes``, ``d2h_bytes``, ``h2d_copies``,
        ``d2h_copies``), the host time inside those copies (``h2d_ns``, ``d2h_ns``) and its device memory pool
        (``pool_reserved_bytes``, ``pool_reserved_high_bytes``, ``pool_used_bytes``, ``pool_used_high_bytes``,
        ``pool_grows``). The counts only grow: measure a run by the difference of two readings. None when the
        plugin predates ABI 1.2 (no ctx_stats); a failure raises GripError."""
        t = self.plugin._table
        if not t.ctx_stats:
            return None
        out = _abi.CtxStats()
        out.struct_size = ctypes.sizeof(_abi.CtxStats)
        with self._lock:
            status = t.ctx_stats(self._pointer(), ctypes.byref(out))
            if status != _abi.OK:
                raise self._error("cannot read the context's counters", status)
        # a plugin of ABI 1.2 writes every field (it refuses a smaller struct_size); a later one stops at ours
        return {name: int(getattr(out, name)) for name, _ in _abi.CtxStats._fields_[1:]}

    def _error(self, where, status):
        return GripError(where, status, self.plugin.status_str(status), self.last_error)

    def stage(self, kind, impl=None, params=None, **kwargs):
        """A configured :class:`Stage`: implementation `impl` of `kind` (default: the kind's first), parameters
        from the dict `params` and keyword arguments (values may be str, bool, int or float; unset keys take their
        defaults). A bad key or value raises GripError (ECONFIG) with the plugin's text naming every bad key."""
        _check_kind(kind)
        info = self.plugin.stage(kind, impl)
        return Stage(self, info, {**(params or {}), **kwargs})

    def close(self):
        """Frees the context after everything made from it (later calls do nothing)."""
        self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<grip.Context of {self.plugin.name} {'closed' if self.closed else 'open'}>"


def _destroy_context(lock, destroy, pointer, children):
    with lock:
        for f in reversed(children):  # what was made from the context goes first, newest first
            f()
        children.clear()
        destroy(pointer)


def _abi_text(b):
    return b.decode("utf-8", "replace") if b else ""


class Stage(_Owned):
    """A configured stage instance. Its run method is the one of its kind: describe, build, match, group or
    verify. Outputs come back in host memory."""

    def __init__(self, context, info, params):
        self.info = info
        self.kind, self.name = info.kind, info.name
        self.params = {str(k): _kv_string(v) for k, v in params.items()}
        keep = [(k.encode(), v.encode()) for k, v in self.params.items()]
        kv = (_abi.KV * max(1, len(keep)))(*[_abi.KV(k, v) for k, v in keep])
        out = ctypes.c_void_p()
        with context._lock:
            status = info._impl.create(context._pointer(), kv, len(keep), ctypes.byref(out))
            if status != _abi.OK or not out.value:
                raise context._error(f"{self.kind} '{self.name}': cannot create the stage", status)
        super().__init__(context, out.value, info._impl.destroy, f"{self.kind} stage '{self.name}'")

    def _run(self, kind):
        if self.kind != kind:
            raise TypeError(f"{self.kind} stage '{self.name}' has no {_abi.RUN_FUNCTIONS[_abi.KINDS.index(kind)]}(); "
                            f"it is a {self.kind} stage")
        return self._pointer()

    def _call(self, what, fn, *args):
        out = ctypes.c_void_p()
        with self._context._lock:
            status = fn(*args, ctypes.byref(out))
            if status != _abi.OK or not out.value:
                raise self._context._error(f"{self.kind} '{self.name}' failed on {what}", status)
        return out.value

    def describe(self, cloud, role="scene", keypoints=None):
        """Features of `cloud` (a numpy array, grip.Cloud or open3d PointCloud): normals (unless the cloud carries
        them), keypoints (the given indices, or the stage's own selection), frames and descriptors. `role` is
        "model" or "scene" (a stage may sample them differently)."""
        stage = self._run("descriptor")
        cloud = as_cloud(cloud)
        if role not in _ROLES:
            raise ValueError(f"role must be 'model' or 'scene', not {role!r}")
        kp_arg = None
        if keypoints is not None:
            kp = np.ascontiguousarray(keypoints, dtype=np.uint32).reshape(-1)
            if kp.size and int(kp.max()) >= cloud.n:
                raise ValueError(f"keypoint index {int(kp.max())} is out of range (the cloud has {cloud.n} points)")
            kp_arg = ctypes.byref(_abi.host_array(_abi.U32, kp.size, 1, kp.ctypes.data if kp.size else None))
        raw = cloud._struct()
        where = f"cloud {cloud.name!r}" if cloud.name else f"the {role} cloud"
        ptr = self._call(where, self.info._impl.describe, stage, ctypes.byref(raw), _ROLES[role], kp_arg,
                         _abi.MEM_HOST)
        return Features(self._context, ptr, cloud, raw, role)

    def describe_many(self, clouds, roles="model"):
        """Features of every cloud in `clouds` (each as describe() takes one), described in one call: on a GPU
        several at once (the stage's `clouds_in_flight` key; ABI 1.4), with an older plugin one describe() a
        cloud. `roles` is "model" or "scene" for all of them, or a list of one per cloud. A cloud the stage refuses
        is named in the GripError, and no features are returned."""
        stage = self._run("descriptor")
        clouds = [as_cloud(c) for c in clouds]
        roles = [roles] * len(clouds) if isinstance(roles, str) else list(roles)
        if len(roles) != len(clouds):
            raise ValueError(f"{len(roles)} roles for {len(clouds)} clouds")
        for role in roles:
            if role not in _ROLES:
                raise ValueError(f"role must be 'model' or 'scene', not {role!r}")
        many = self.info._impl.describe_many  # NULL (false) past an older plugin's struct_size
        if len(clouds) < 2 or not many:
            return [self.describe(c, r) for c, r in zip(clouds, roles)]
        n = len(clouds)
        raws = [c._struct() for c in clouds]
        each = (ctypes.POINTER(_abi.Cloud) * n)(*[ctypes.pointer(r) for r in raws])
        role_ids = (ctypes.c_uint32 * n)(*[_ROLES[r] for r in roles])
        out = (ctypes.c_void_p * n)()
        failed = ctypes.c_uint32(n)
        with self._context._lock:
            status = many(stage, each, role_ids, None, n, _abi.MEM_HOST, out, ctypes.byref(failed))
            if status != _abi.OK:
                i = failed.value
                what = (f"cloud {clouds[i].name!r}" if clouds[i].name else f"cloud {i}") if i < n else "the clouds"
                raise self._context._error(f"{self.kind} '{self.name}' failed on {what}", status)
        return [Features(self._context, out[i], clouds[i], raws[i], roles[i]) for i in range(n)]

    def build(self, reference, model_ids=None):
        """An :class:`Index` over `reference` (float32 n x D descriptors), each row tagged by `model_ids` (n uint32,
        ascending, each model's rows contiguous; None: all model 0)."""
        stage = self._run("index")
        ref = _float_rows("reference", reference)
        ref_arr = _abi.host_array(_abi.F32, ref.shape[0], ref.shape[1], ref.ctypes.data)
        ids_arg = None
        if model_ids is not None:
            ids = np.ascontiguousarray(model_ids, dtype=np.uint32).reshape(-1)
            if ids.size != ref.shape[0]:
                raise ValueError(f"model_ids has {ids.size} entries for {ref.shape[0]} reference rows")
            ids_arg = ctypes.byref(_abi.host_array(_abi.U32, ids.size, 1, ids.ctypes.data))
        ptr = self._call("the reference descriptors", self.info._impl.build, stage, ctypes.byref(ref_arr), ids_arg)
        return Index(self._context, ptr)

    def match(self, index, queries):
        """:class:`Matches` of the query descriptors (a Features, or float32 m x D) against `index`."""
        stage = self._run("match")
        if isinstance(index, Index):
            index_ptr = index._pointer()
        else:
            raise TypeError(f"index must be a grip.Index, not {type(index).__name__}")
        # a Features' descriptors are passed where they are, in the plugin's memory, as grip-host passes them
        q = queries._descriptor_view() if isinstance(queries, Features) else _float_rows("queries", queries)
        q_arr = _abi.host_array(_abi.F32, q.shape[0], q.shape[1], q.ctypes.data if q.size else None)
        ptr = self._call("the query descriptors", self.info._impl.match, stage, index_ptr, ctypes.byref(q_arr),
                         _abi.MEM_HOST)
        del q
        return Matches(self._context, ptr)

    def group(self, models, scene, matches):
        """:class:`Hypotheses` from `matches`; models[i] is the Features of model id i, scene the scene's."""
        stage = self._run("group")
        views, scene_view, keep = _views(models, scene)
        ptr = self._call("the correspondences", self.info._impl.group, stage, views, len(models),
                         ctypes.byref(scene_view), _owned_pointer(matches, Matches, "matches"))
        del keep
        return Hypotheses(self._context, ptr)

    def verify(self, models, scene, hypotheses):
        """:class:`Verdicts` on `hypotheses`, refined against the scene; models[i] is the Features of model id i."""
        stage = self._run("verify")
        views, scene_view, keep = _views(models, scene)
        ptr = self._call("the hypotheses", self.info._impl.verify, stage, views, len(models),
                         ctypes.byref(scene_view), _owned_pointer(hypotheses, Hypotheses, "hypotheses"))
        del keep
        return Verdicts(self._context, ptr)

    def __repr__(self):
        return f"<grip.Stage {self.kind} '{self.name}'{' closed' if self.closed else ''}>"


def _float_rows(what, a):
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{what} must be a numpy array of float32, not {type(a).__name__}")
    if a.dtype != np.float32:
        raise TypeError(f"{what} must be float32, not {a.dtype} (convert with {what}.astype(np.float32))")
    if a.ndim != 2:
        raise ValueError(f"{what} must be rows x D, not of shape {a.shape}")
    return np.ascontiguousarray(a)


def _owned_pointer(obj, cls, what):
    if not isinstance(obj, cls):
        raise TypeError(f"{what} must be a grip.{cls.__name__}, not {type(obj).__name__}")
    return obj._pointer()


def _views(models, scene):
    """grip_view structs for the models' and the scene's features; `keep` holds what they point to."""
    models = list(models)
    for i, f in enumerate(models + [scene]):
        if not isinstance(f, Features):
            raise TypeError(f"{'scene' if i == len(models) else f'models[{i}]'} must be a grip.Features, "
                            f"not {type(f).__name__}")
    if not models:
        raise ValueError("no model (give at least one)")
    views = (_abi.View * len(models))()
    for i, f in enumerate(models):
        views[i] = _abi.View(ctypes.sizeof(_abi.View), ctypes.pointer(f._cloud_struct), f._pointer())
    scene_view = _abi.View(ctypes.sizeof(_abi.View), ctypes.pointer(scene._cloud_struct), scene._pointer())
    return views, scene_view, (models, scene)


class Features(_Owned):
    """What the descriptor stage found on one cloud. Arrays are copied out on first access:

    keypoints     uint32 k: index of each keypoint in the cloud
    keypoint_xyz  float32 k x 3
    normals       float32 n x 4 (nx, ny, nz, curvature) for every point; NaN rows where undefined
    frames        float32 k x 9: each keypoint's local reference frame (x, y, z axis rows); NaN if invalid
    descriptors   float32 k x D; a NaN row marks an invalid keypoint
    normals_source  where the normals came from, as the stage's `normals` key decided: "computed", "cloud" (the
                  cloud's own), "cloud_rescaled" (the cloud's own, rescaled to unit length), "recomputed" (the
                  cloud's own were unusable), or "unsaid" (a plugin older than ABI 1.2)
    """

    def __init__(self, context, pointer, cloud, cloud_struct, role):
        self._raw, _ = _abi.read_prefix(_abi.Features, pointer)
        super().__init__(context, pointer, self._raw.release, "features")
        self.cloud = cloud                  # the input, which group and verify see beside the features
        self._cloud_struct = cloud_struct
        self.role = role
        self.descriptor_dim = int(self._raw.descriptor_dim)
        source = int(self._raw.normals_source)
        self.normals_source = _abi.NORMALS_SOURCES[source] if source < len(_abi.NORMALS_SOURCES) else "unsaid"
        self._cache = {}

    def _get(self, field, dtype=None):
        if field not in self._cache:
            with self._context._lock:
                self._pointer()
                self._cache[field] = _copy_array(getattr(self._raw, field), f"features.{field}", dtype)
        return self._cache[field]

    def _descriptor_view(self):
        """The descriptors in the plugin's memory, without a copy: valid while these features are open."""
        if "descriptors" in self._cache:
            return self._cache["descriptors"]
        self._pointer()
        return _view_array(self._raw.descriptors, "features.descriptors", _abi.F32)

    @property
    def keypoints(self):
        return self._get("keypoints", _abi.U32).reshape(-1)

    @property
    def keypoint_xyz(self):
        return self._get("keypoint_xyz", _abi.F32)

    @property
    def normals(self):
        return self._get("normals", _abi.F32)

    @property
    def frames(self):
        return self._get("frames", _abi.F32)

    @property
    def descriptors(self):
        return self._get("descriptors", _abi.F32)

    def __len__(self):
        return int(self._raw.keypoints.rows)

    def __repr__(self):
        return f"<grip.Features {len(self)} keypoints x {self.descriptor_dim}{' closed' if self.closed else ''}>"


class Index(_Owned):
    """A searchable set of reference descriptors, made by an index stage (``rows``, ``dim``, ``n_models``,
    ``exact``); search() asks it for nearest neighbours directly."""

    def __init__(self, context, pointer):
        self._raw, _ = _abi.read_prefix(_abi.Index, pointer)
        super().__init__(context, pointer, self._raw.release, "index")
        self.rows, self.dim = int(self._raw.rows), int(self._raw.dim)
        self.n_models, self.exact = int(self._raw.n_models), bool(self._raw.exact)

    def search(self, queries, k=1, max_sqdist=float("inf")):
        """(ids uint32 m x k, sqdist float32 m x k): each query's k nearest reference rows within max_sqdist,
        padded with id 0xFFFFFFFF and +inf."""
        q = _float_rows("queries", queries)
        m = q.shape[0]
        ids = np.empty((m, k), dtype=np.uint32)
        sq = np.empty((m, k), dtype=np.float32)
        args = [_abi.host_array(_abi.F32, m, q.shape[1], q.ctypes.data),
                _abi.host_array(_abi.U32, m, k, ids.ctypes.data), _abi.host_array(_abi.F32, m, k, sq.ctypes.data)]
        with self._context._lock:
            status = self._raw.search(self._pointer(), ctypes.byref(args[0]), int(k), float(max_sqdist),
                                      ctypes.byref(args[1]), ctypes.byref(args[2]))
            if status != _abi.OK:
                raise self._context._error("index search", status)
        return ids, sq

    def __repr__(self):
        return f"<grip.Index {self.rows} x {self.dim}, {self.n_models} models>"


class Matches(_Owned):
    """Correspondences, sorted by query then best first: ``query`` (scene keypoint), ``reference`` (the model's
    keypoint number), ``model_id`` (uint32 each) and ``sqdist`` (float32), each ``count`` long."""

    def __init__(self, context, pointer):
        raw, _ = _abi.read_prefix(_abi.Matches, pointer)
        super().__init__(context, pointer, raw.release, "matches")
        self.count = int(raw.count)
        with context._lock:
            self.query = _copy_array(raw.query, "matches.query", _abi.U32).reshape(-1)
            self.reference = _copy_array(raw.reference, "matches.reference", _abi.U32).reshape(-1)
            self.model_id = _copy_array(raw.model_id, "matches.model_id", _abi.U32).reshape(-1)
            self.sqdist = _copy_array(raw.sqdist, "matches.sqdist", _abi.F32).reshape(-1)

    def __len__(self):
        return self.count

    def __repr__(self):
        return f"<grip.Matches {self.count}>"


class Hypothesis:
    """One pose hypothesis: model_id, pose (4 x 4 float64, model -> scene), votes, members (indices into the
    matches given to group())."""

    def __init__(self, raw, size):
        self.model_id = int(raw.model_id)
        self.pose = np.array(raw.pose[:], dtype=np.float64).reshape(4, 4)
        self.votes = float(raw.votes)
        n = int(raw.n_members)
        self.members = np.ctypeslib.as_array(raw.members, (n,)).astype(np.uint32) if n and raw.members \
            else np.empty(0, dtype=np.uint32)

    def __repr__(self):
        return f"<grip.Hypothesis model {self.model_id}, {len(self.members)} members, votes {self.votes:.3g}>"


def _items(raw, cls, what):
    stride = int(raw.item_size)
    if raw.count and (not raw.items or stride < _abi.field_end(cls, "struct_size")):
        raise GripError(f"{what}: the plugin returned {raw.count} items without a usable stride ({stride})")
    return [_abi.read_prefix(cls, raw.items + i * stride, min(stride, ctypes.c_uint32.from_address(
        raw.items + i * stride).value)) for i in range(int(raw.count))]


class Hypotheses(_Owned):
    """The group stage's hypotheses, a sequence of :class:`Hypothesis`."""

    def __init__(self, context, pointer):
        raw, _ = _abi.read_prefix(_abi.Hypotheses, pointer)
        super().__init__(context, pointer, raw.release, "hypotheses")
        with context._lock:
            self.items = [Hypothesis(h, size) for h, size in _items(raw, _abi.Hypothesis, "hypotheses")]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def __repr__(self):
        return f"<grip.Hypotheses {len(self.items)}>"


class Verdict:
    """The verify stage's verdict on hypothesis ``hypothesis``: refined pose (4 x 4 float64), fitness, rmse,
    iterations, accepted, violation (NaN when not measured), and ``rejected_by``: "" when accepted, else the verify
    key whose test rejected it ("min_fitness", "max_drift", ...; "unspecified" from a plugin that does not say)."""

    def __init__(self, raw, size):
        self.hypothesis = int(raw.hypothesis)
        self.pose = np.array(raw.pose[:], dtype=np.float64).reshape(4, 4)
        self.fitness, self.rmse = float(raw.fitness), float(raw.rmse)
        self.iterations, self.accepted = int(raw.iterations), bool(raw.accepted)
        # a verdict written before the field existed has not measured it
        self.violation = float(raw.violation) if size >= _abi.field_end(_abi.Verdict, "violation") else float("nan")
        reason = int(raw.reason) if size >= _abi.field_end(_abi.Verdict, "reason") else _abi.VERDICT_UNSPECIFIED
        if not self.accepted and not 0 < reason < len(_abi.VERDICT_REASON_KEYS):
            reason = _abi.VERDICT_UNSPECIFIED
        self.rejected_by = "" if self.accepted else _abi.VERDICT_REASON_KEYS[reason]

    def __repr__(self):
        return f"<grip.Verdict on {self.hypothesis}: {'accepted' if self.accepted else 'rejected'}, fitness " \
               f"{self.fitness:.3f}, rmse {self.rmse:.3g}>"


class Verdicts(_Owned):
    """The verify stage's verdicts, a sequence of :class:`Verdict` (one per hypothesis)."""

    def __init__(self, context, pointer):
        raw, _ = _abi.read_prefix(_abi.Verdicts, pointer)
        super().__init__(context, pointer, raw.release, "verdicts")
        with context._lock:
            self.items = [Verdict(v, size) for v, size in _items(raw, _abi.Verdict, "verdicts")]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def __repr__(self):
        return f"<grip.Verdicts {len(self.items)}>"
