"""Finding libgrip.so, loading it through its one exported symbol, and reading its table of stages.

The table is read as host-example/loader.c reads it: no struct past its struct_size, every required field
checked, parameter tables walked with their own stride; a plugin that fails a check is refused with a
:class:`PluginLoadError` that says which field is at fault.
"""

import ctypes
import os
import shutil
import subprocess
import sys
import sysconfig
import threading
from dataclasses import dataclass
from typing import Optional, Tuple

from . import _abi
from ._errors import PluginLoadError, PluginNotFoundError

PLUGIN_FILE = "libgrip.so"


# ---- finding the plugin --------------------------------------------------------------------------------------------

def _recorded_path():
    """The plugin path written into the package when it was built (setup.py), if any."""
    try:
        from . import _install  # generated at install time; absent in the source tree
    except ImportError:
        return None
    return getattr(_install, "PLUGIN_PATH", None)


def _pkg_config_plugin():
    """pkg-config's idea of the installed plugin (grip.pc's `plugin` variable), if pkg-config knows grip."""
    exe = shutil.which("pkg-config")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--variable=plugin", "grip"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    path = out.stdout.strip()
    return path if out.returncode == 0 and path else None


def _common_locations():
    """Where an installed or freshly built plugin usually is, most specific first."""
    here = os.path.dirname(os.path.abspath(__file__))
    places = []
    # imported from a source checkout (python/grip): the build folders of the README's commands
    repo = os.path.dirname(os.path.dirname(here))
    places += [os.path.join(repo, "build", PLUGIN_FILE)]
    # installed next to this Python (a venv or conda prefix that grip was also installed into), then the system
    prefixes = [sys.prefix, "/usr/local", "/usr", "/opt/grip"]
    multiarch = sysconfig.get_config_var("MULTIARCH")
    for prefix in dict.fromkeys(prefixes):
        libdirs = ["lib", "lib64"] + ([os.path.join("lib", multiarch)] if multiarch else [])
        places += [os.path.join(prefix, d, "grip", PLUGIN_FILE) for d in libdirs]
    return places


def find_plugin(path=None):
    """The path of the plugin to load.

    In order: `path` (a file, or a folder holding libgrip.so), else $GRIP_PLUGIN, else the path recorded when the
    package was installed, else pkg-config's grip.pc, else the usual places (a source checkout's build/,
    <prefix>/lib/grip/ of this Python's prefix, /usr/local, /usr, /opt/grip). A path that was given (argument or
    $GRIP_PLUGIN) must exist: it is not silently replaced by another plugin. Raises PluginNotFoundError.
    """
    if path is not None:
        path = os.fspath(path)
        if os.path.isdir(path):
            path = os.path.join(path, PLUGIN_FILE)
        if not os.path.isfile(path):
            raise PluginNotFoundError(f"{path}: no such plugin file", [path])
        return path
    env = os.environ.get("GRIP_PLUGIN")
    if env:
        if not os.path.isfile(env):
            raise PluginNotFoundError(f"{env}: no such plugin file (from $GRIP_PLUGIN)", [env])
        return env
    looked = []
    for candidate in [_recorded_path, _pkg_config_plugin]:
        p = candidate()
        if p:
            looked.append(p)
            if os.path.isfile(p):
                return p
    for p in _common_locations():
        looked.append(p)
        if os.path.isfile(p):
            return p
    raise PluginNotFoundError(
        "no grip plugin found; pass grip.Plugin(path), set GRIP_PLUGIN=/path/to/libgrip.so, or install grip "
        "(cmake --install) where pkg-config finds it. Looked in:\n  " + "\n  ".join(looked), looked)


# ---- the parameter tables ----------------------------------------------------------------------------------------

_TYPE_NAMES = {_abi.PARAM_BOOL: "bool", _abi.PARAM_INT: "int", _abi.PARAM_FLOAT: "float", _abi.PARAM_ENUM: "enum",
               _abi.PARAM_STRING: "string"}


def _text(b):
    return b.decode("utf-8", "replace") if b is not None else None


@dataclass(frozen=True)
class Param:
    """One entry of a stage's parameter table.

    ``type`` is "bool", "int", "float", "enum" or "string"; ``default`` is the value as a config file would write it;
    ``min``/``max`` bound an int or float (None for other types); ``choices`` are an enum's words; ``doc`` is one
    line, with the unit.
    """
    key: str
    type: str
    default: str
    min: Optional[float]
    max: Optional[float]
    choices: Optional[Tuple[str, ...]]
    doc: str

    @property
    def name(self):
        return self.key

    @property
    def range(self):
        """(min, max) for an int or float, else None."""
        return None if self.min is None else (self.min, self.max)

    @property
    def default_value(self):
        """The default as a Python value (bool, int, float or str)."""
        return _typed(self, self.default)


def _typed(p, text):
    if p.type == "bool":
        return text.strip().lower() in ("true", "1", "yes", "on")
    if p.type == "int":
        return int(text)
    if p.type == "float":
        return float(text)
    return text


@dataclass(frozen=True, eq=False)
class StageInfo:
    """A stage implementation the plugin offers: its kind ("descriptor", "index", "match", "group", "verify"), name
    (the config's `impl`), summary, backends ({"cpu", "cuda"} as this build offers them) and parameter table."""
    plugin: "Plugin"
    kind: str
    name: str
    summary: str
    backends: frozenset
    params: Tuple[Param, ...]
    _impl: _abi.StageImpl  # the host-layout copy whose function pointers are called

    def param(self, key):
        """The table entry for `key`; KeyError when the stage has none."""
        for p in self.params:
            if p.key == key:
                return p
        raise KeyError(f"{self.kind} '{self.name}' has no parameter '{key}' "
                       f"(it has: {', '.join(p.key for p in self.params) or 'none'})")

    def __repr__(self):
        return f"<grip stage {self.kind} '{self.name}' ({len(self.params)} parameters)>"


# ---- loading ------------------------------------------------------------------------------------------------------

class Plugin:
    """A loaded grip plugin: its identity and its stages. Load with ``grip.Plugin(path=None)`` (see
    :func:`find_plugin`) or :func:`load_plugin`, which reuses one Plugin per file. The library stays loaded for the
    life of the process (it is built not to be unloaded)."""

    def __init__(self, path=None):
        self.path = find_plugin(path)
        try:
            self._lib = ctypes.CDLL(self.path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as e:
            raise PluginLoadError(self.path, f"not a loadable shared object: {e}") from None
        try:
            get = _abi.PLUGIN_GET((_abi.ENTRY.decode(), self._lib))
        except AttributeError:
            raise PluginLoadError(self.path, "does not export grip_plugin_get(): not a grip plugin") from None
        raw = get(_abi.ABI_MAJOR, _abi.ABI_MINOR)
        if not raw:
            raise PluginLoadError(self.path, f"grip_plugin_get({_abi.ABI_MAJOR}, {_abi.ABI_MINOR}) returned NULL: "
                                             f"the plugin does not speak ABI major {_abi.ABI_MAJOR}")
        self._table = self._check_table(ctypes.addressof(raw.contents))
        t = self._table
        self.name = _text(t.name)
        self.version = _text(t.version)
        self.abi = (t.abi_major, t.abi_minor)
        self.capabilities = t.capabilities
        self.stages = tuple(self._read_stage(i, t.stages[i]) for i in range(t.n_stages))
        self._check_duplicates()

    # -- table checks, mirroring host-example/loader.c --

    def _refuse(self, why):
        raise PluginLoadError(self.path, why)

    def _check_table(self, address):
        need = _abi.field_end(_abi.Plugin, "stages")
        t, size = _abi.read_prefix(_abi.Plugin, address)
        if size < need:
            self._refuse(f"plugin table is a short struct: struct_size {size}, the host needs at least {need} bytes "
                         f"(through 'stages')")
        if t.abi_major != _abi.ABI_MAJOR:
            self._refuse(f"plugin table is for ABI major {t.abi_major}, this host speaks {_abi.ABI_MAJOR}")
        for field in ("name", "version", "status_str", "ctx_create", "ctx_destroy", "ctx_last_error"):
            if not getattr(t, field):
                self._refuse(f"plugin table: '{field}' is NULL (required)")
        if t.n_stages > 0 and not t.stages:
            self._refuse("plugin table: 'stages' is NULL (required)")
        return t

    def _read_stage(self, i, address):
        if not address:
            self._refuse(f"stage {i} is NULL")
        s, size = _abi.read_prefix(_abi.StageImpl, address)
        base = _abi.field_end(_abi.StageImpl, "destroy")
        if size < base:
            self._refuse(f"stage {i} is a short struct: struct_size {size}, the host needs at least {base} bytes")
        if s.kind >= len(_abi.KINDS):
            self._refuse(f"stage {i}: kind {s.kind} is out of range (0..{len(_abi.KINDS) - 1})")
        kind, run = _abi.KINDS[s.kind], _abi.RUN_FUNCTIONS[s.kind]
        need = _abi.field_end(_abi.StageImpl, run)
        if size < need:
            self._refuse(f"stage {i} ({kind}) is a short struct: struct_size {size}, a {kind} stage needs at least "
                         f"{need} bytes (through '{run}')")
        if not s.name:
            self._refuse(f"stage {i} ({kind}): name is NULL or empty")
        name = _text(s.name)
        if not s.create or not s.destroy:
            self._refuse(f"stage {i} ({kind} '{name}'): '{'destroy' if s.create else 'create'}' is NULL (required)")
        runs = [r for r in _abi.RUN_FUNCTIONS if getattr(s, r)]
        if runs != [run]:
            self._refuse(f"stage {i} ({kind} '{name}'): exactly one run function, '{run}', must be set "
                         f"(set: {', '.join(runs) or 'none'})")
        if s.n_params > 0 and not s.params:
            self._refuse(f"stage {i} ({kind} '{name}'): n_params is {s.n_params} but params is NULL")
        params = self._read_params(f"stage {i} ({kind} '{name}')", s)
        backends = frozenset(b for bit, b in ((_abi.BACKEND_CPU, "cpu"), (_abi.BACKEND_CUDA, "cuda"))
                             if s.backends & bit)
        return StageInfo(self, kind, name, _text(s.summary) or "", backends, params, s)

    def _read_params(self, where, s):
        if s.n_params == 0:
            return ()
        stride = ctypes.c_uint32.from_address(s.params).value
        need = _abi.field_end(_abi.ParamInfo, "choices")
        if stride < need:
            self._refuse(f"{where}: params is a short struct: struct_size {stride}, the host needs at least {need} "
                         f"bytes (through 'choices')")
        out, keys = [], set()
        for j in range(s.n_params):
            p, size = _abi.read_prefix(_abi.ParamInfo, s.params + j * stride, stride)
            if p.struct_size != stride:
                self._refuse(f"{where}: params[{j}].struct_size is {p.struct_size} but the table's stride "
                             f"(params[0]) is {stride}")
            key = _text(p.key)
            if not key:
                self._refuse(f"{where}: params[{j}].key is NULL or empty")
            if key in ("impl", "plugin"):
                self._refuse(f"{where}: params[{j}].key '{key}' is reserved for the host's config")
            if p.type not in _TYPE_NAMES:
                self._refuse(f"{where}: params[{j}] ('{key}') has an unknown type {p.type}")
            if key in keys:
                self._refuse(f"{where}: params[{j}] '{key}' appears twice")
            keys.add(key)
            numeric = p.type in (_abi.PARAM_INT, _abi.PARAM_FLOAT)
            choices = tuple(_text(p.choices).split("|")) if p.type == _abi.PARAM_ENUM and p.choices else None
            if p.type == _abi.PARAM_ENUM and not choices:
                self._refuse(f"{where}: params[{j}] ('{key}') is an enum without choices")
            out.append(Param(key, _TYPE_NAMES[p.type], _text(p.default_value) or "",
                             p.min if numeric else None, p.max if numeric else None, choices, _text(p.doc) or ""))
        return tuple(out)

    def _check_duplicates(self):
        seen = set()
        for s in self.stages:
            if (s.kind, s.name) in seen:
                self._refuse(f"two stages are both {s.kind} '{s.name}'")
            seen.add((s.kind, s.name))

    # -- public --

    @property
    def has_cuda_kernels(self):
        """Whether this build has CUDA kernels (whether a device exists is Context.device_count())."""
        return bool(self.capabilities & _abi.CAP_CUDA)

    def status_str(self, status):
        """The plugin's text for a grip_status."""
        return _text(self._table.status_str(int(status))) or ""

    def stages_of(self, kind):
        """The implementations of one kind, in the plugin's order (the first is the kind's default)."""
        _check_kind(kind)
        return tuple(s for s in self.stages if s.kind == kind)

    def stage(self, kind, name=None):
        """The implementation `name` of `kind`, or the kind's default (the first registered) when name is None.
        KeyError, listing what there is, when there is none."""
        candidates = self.stages_of(kind)
        for s in candidates:
            if name is None or s.name == name:
                return s
        have = ", ".join(s.name for s in candidates) or "none"
        raise KeyError(f"{self.path}: no {kind} stage '{name}' (available: {have})" if name else
                       f"{self.path}: the plugin has no {kind} stage")

    def context(self, device_ordinal=-1, threads=0):
        """A new :class:`grip.Context` (device choice, CPU threads, last-error text)."""
        from ._objects import Context
        return Context(self, device_ordinal, threads)

    def __repr__(self):
        return f"<grip plugin {self.name} {self.version} (ABI {self.abi[0]}.{self.abi[1]}) at {self.path}>"


def _check_kind(kind):
    if kind not in _abi.KINDS:
        raise ValueError(f"unknown stage kind {kind!r} (kinds: {', '.join(_abi.KINDS)})")


_loaded = {}
_loaded_lock = threading.Lock()


def load_plugin(path=None):
    """The :class:`Plugin` at `path` (found as :func:`find_plugin` says), loaded once per file and shared."""
    real = os.path.realpath(find_plugin(path))
    with _loaded_lock:
        if real not in _loaded:
            _loaded[real] = Plugin(real)
        return _loaded[real]
