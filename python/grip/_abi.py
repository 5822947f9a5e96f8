"""ctypes mirror of plugin.h (ABI 1.4), and the rule for reading what a plugin writes.

Every struct a plugin hands over starts with ``struct_size``, the size the plugin was compiled with; fields are
only ever appended. :func:`read_prefix` copies no more than that many bytes into a zeroed struct of this
module's layout, so a field the plugin does not have reads as 0 / NULL (its documented default), exactly as
host-example/loader.c does for the C host.
"""

import ctypes
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_float, c_int, c_int32, c_uint32,
                    c_uint64, c_void_p)

ABI_MAJOR = 1
ABI_MINOR = 4
ENTRY = b"grip_plugin_get"

# grip_status
OK, EINVAL, ENOMEM, ECONFIG, EUNSUPPORTED = 0, -1, -2, -3, -4
ENODEV, ECUDA, ELAPACK, EIO, EINTERNAL = -5, -6, -7, -8, -9

# grip_dtype
F32, U32, I32, U8 = 1, 2, 3, 4
# grip_memory
MEM_HOST, MEM_CUDA = 0, 1
# grip_role
ROLE_MODEL, ROLE_SCENE = 0, 1
# grip_param_type
PARAM_BOOL, PARAM_INT, PARAM_FLOAT, PARAM_ENUM, PARAM_STRING = 1, 2, 3, 4, 5
# backends and capabilities
BACKEND_CPU, BACKEND_CUDA = 1, 2
CAP_CUDA = 1

KINDS = ("descriptor", "index", "match", "group", "verify")
RUN_FUNCTIONS = ("describe", "build", "match", "group", "verify")


class Array(Structure):
    _fields_ = [("struct_size", c_uint32), ("dtype", c_uint32), ("memory", c_uint32), ("device", c_int32),
                ("rows", c_uint64), ("cols", c_uint64), ("data", c_void_p)]


class Cloud(Structure):
    _fields_ = [("struct_size", c_uint32), ("width", c_uint32), ("height", c_uint32), ("xyz", Array),
                ("normals", Array), ("rgb", Array), ("name", c_char_p), ("viewpoint", c_float * 3)]


class CtxOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("device_ordinal", c_int32), ("threads", c_uint32)]


class CtxStats(Structure):
    """grip_ctx_stats (ABI 1.2): what a context has done with its CUDA device; the counts only grow."""
    _fields_ = [("struct_size", c_uint32), ("device", c_int32), ("h2d_bytes", c_uint64), ("d2h_bytes", c_uint64),
                ("h2d_copies", c_uint64), ("d2h_copies", c_uint64), ("h2d_ns", c_uint64), ("d2h_ns", c_uint64),
                ("pool_reserved_bytes", c_uint64), ("pool_reserved_high_bytes", c_uint64),
                ("pool_used_bytes", c_uint64), ("pool_used_high_bytes", c_uint64), ("pool_grows", c_uint64)]


class ParamInfo(Structure):
    _fields_ = [("struct_size", c_uint32), ("type", c_uint32), ("key", c_char_p), ("default_value", c_char_p),
                ("min", c_double), ("max", c_double), ("choices", c_char_p), ("doc", c_char_p),
                ("flags", c_uint32)]  # since ABI 1.1: PARAM_FLAG_*


# grip_param_info.flags
PARAM_FLAG_LENGTH = 1  # a length in the cloud's unit (a host may accept "N mr")


class KV(Structure):
    _fields_ = [("key", c_char_p), ("value", c_char_p)]


# every object a plugin returns is released through a pointer it carries: void release(T *self)
RELEASE = CFUNCTYPE(None, c_void_p)


class Features(Structure):
    _fields_ = [("struct_size", c_uint32), ("descriptor_dim", c_uint32), ("keypoints", Array),
                ("keypoint_xyz", Array), ("normals", Array), ("frames", Array), ("descriptors", Array),
                ("release", RELEASE), ("normals_source", c_uint32), ("xyz", Array)]


# grip_normals_source (grip_features.normals_source, ABI 1.2): where a descriptor stage took the normals from
NORMALS_SOURCES = ("unsaid", "computed", "cloud", "cloud_rescaled", "recomputed")


SEARCH = CFUNCTYPE(c_int, c_void_p, POINTER(Array), c_uint32, c_float, POINTER(Array), POINTER(Array))


class Index(Structure):
    _fields_ = [("struct_size", c_uint32), ("rows", c_uint64), ("dim", c_uint32), ("n_models", c_uint32),
                ("model_ids", Array), ("search", SEARCH), ("exact", c_uint32), ("reference", Array),
                ("release", RELEASE)]


class Matches(Structure):
    _fields_ = [("struct_size", c_uint32), ("count", c_uint64), ("query", Array), ("reference", Array),
                ("model_id", Array), ("sqdist", Array), ("release", RELEASE)]


class Hypothesis(Structure):
    _fields_ = [("struct_size", c_uint32), ("model_id", c_uint32), ("pose", c_float * 16), ("votes", c_float),
                ("n_members", c_uint32), ("members", POINTER(c_uint32))]


class Hypotheses(Structure):
    _fields_ = [("struct_size", c_uint32), ("count", c_uint32), ("item_size", c_uint32), ("items", c_void_p),
                ("release", RELEASE)]


class Verdict(Structure):
    _fields_ = [("struct_size", c_uint32), ("hypothesis", c_uint32), ("pose", c_float * 16), ("fitness", c_float),
                ("rmse", c_float), ("iterations", c_uint32), ("accepted", c_uint32), ("violation", c_float),
                ("reason", c_uint32)]


# grip_verdict_reason, each by the verify key that sets its test (plugin.h)
VERDICT_REASON_KEYS = ("", "unspecified", "max_hypotheses", "max_correspondence_distance", "min_fitness", "max_rmse",
                       "max_drift", "max_violation", "duplicate_distance", "ghv", "max_sunk")
VERDICT_UNSPECIFIED = 1


class Verdicts(Structure):
    _fields_ = [("struct_size", c_uint32), ("count", c_uint32), ("item_size", c_uint32), ("items", c_void_p),
                ("release", RELEASE)]


class View(Structure):
    _fields_ = [("struct_size", c_uint32), ("cloud", POINTER(Cloud)), ("features", c_void_p)]


OUT = POINTER(c_void_p)
CREATE = CFUNCTYPE(c_int, c_void_p, POINTER(KV), c_uint32, OUT)
DESTROY = CFUNCTYPE(None, c_void_p)
DESCRIBE = CFUNCTYPE(c_int, c_void_p, POINTER(Cloud), c_uint32, POINTER(Array), c_uint32, OUT)
BUILD = CFUNCTYPE(c_int, c_void_p, POINTER(Array), POINTER(Array), OUT)
MATCH = CFUNCTYPE(c_int, c_void_p, c_void_p, POINTER(Array), c_uint32, OUT)
GROUP = CFUNCTYPE(c_int, c_void_p, POINTER(View), c_uint32, POINTER(View), c_void_p, OUT)
VERIFY = CFUNCTYPE(c_int, c_void_p, POINTER(View), c_uint32, POINTER(View), c_void_p, OUT)
DESCRIBE_MANY = CFUNCTYPE(c_int, c_void_p, POINTER(POINTER(Cloud)), POINTER(c_uint32), POINTER(POINTER(Array)),
                          c_uint32, c_uint32, OUT, POINTER(c_uint32))


class StageImpl(Structure):
    _fields_ = [("struct_size", c_uint32), ("kind", c_uint32), ("name", c_char_p), ("summary", c_char_p),
                ("backends", c_uint32), ("n_params", c_uint32), ("params", c_void_p), ("create", CREATE),
                ("destroy", DESTROY), ("describe", DESCRIBE), ("build", BUILD), ("match", MATCH), ("group", GROUP),
                ("verify", VERIFY),
                # since ABI 1.4: NULL when the plugin's struct_size does not cover it (read_prefix)
                ("describe_many", DESCRIBE_MANY)]


class Plugin(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_major", c_uint32), ("abi_minor", c_uint32), ("name", c_char_p),
                ("version", c_char_p), ("capabilities", c_uint32),
                ("status_str", CFUNCTYPE(c_char_p, c_int)),
                ("ctx_create", CFUNCTYPE(c_int, POINTER(CtxOptions), OUT)),
                ("ctx_destroy", CFUNCTYPE(None, c_void_p)),
                ("ctx_last_error", CFUNCTYPE(c_char_p, c_void_p)),
                ("device_count", CFUNCTYPE(c_int32, c_void_p)),
                ("n_stages", c_uint32), ("stages", POINTER(c_void_p)),
                # since ABI 1.1 / 1.2: NULL when the plugin's struct_size does not cover them (read_prefix)
                ("cloud_resolution", CFUNCTYPE(c_int, c_void_p, POINTER(Cloud), POINTER(c_double))),
                ("ctx_stats", CFUNCTYPE(c_int, c_void_p, POINTER(CtxStats)))]


PLUGIN_GET = CFUNCTYPE(POINTER(Plugin), c_uint32, c_uint32)


def field_end(cls, name):
    """The offset just past field `name`: a struct_size at least this large contains the field."""
    f = getattr(cls, name)
    return f.offset + f.size


def read_prefix(cls, address, size=None):
    """A copy of the struct at `address` in this module's layout, reading at most its struct_size bytes (or
    `size`, for arrays whose stride says it); the rest stays zero. Returns (copy, size read from the plugin)."""
    if size is None:
        size = c_uint32.from_address(address).value
    out = cls()
    ctypes.memmove(ctypes.addressof(out), address, min(size, ctypes.sizeof(cls)))
    return out, size


def host_array(dtype, rows, cols, data):
    """A grip_array over host memory."""
    return Array(ctypes.sizeof(Array), dtype, MEM_HOST, -1, rows, cols, data)
