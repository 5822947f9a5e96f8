"""The exceptions of the grip package."""

import enum

from . import _abi


class Status(enum.IntEnum):
    """grip_status: 0 is success, every failure is negative."""
    OK = _abi.OK
    EINVAL = _abi.EINVAL
    ENOMEM = _abi.ENOMEM
    ECONFIG = _abi.ECONFIG
    EUNSUPPORTED = _abi.EUNSUPPORTED
    ENODEV = _abi.ENODEV
    ECUDA = _abi.ECUDA
    ELAPACK = _abi.ELAPACK
    EIO = _abi.EIO
    EINTERNAL = _abi.EINTERNAL


def _status(code):
    try:
        return Status(code)
    except ValueError:  # a newer plugin's code: keep the number
        return code


class GripError(Exception):
    """A call into the plugin failed.

    ``status`` is the grip_status (a :class:`Status` when known, else the plain int; None where no call was made),
    ``status_text`` the plugin's own name for it (status_str), ``message`` the context's last-error text, which names
    the stage and the key or input at fault, and ``where`` what was being done ("descriptor 'shot' on scene.pcd").
    """

    def __init__(self, where, status=None, status_text="", message=""):
        self.where = where
        self.status = _status(status) if status is not None else None
        self.status_text = status_text or ""
        self.message = message or ""
        parts = [p for p in (self.status_text, self.message) if p]
        super().__init__(f"{where}: {': '.join(parts)}" if parts else where)


class ConfigError(GripError):
    """The configuration is wrong: a malformed INI file, an unknown section, stage or key, a bad value. Its status
    is ECONFIG; ``problems`` lists each problem (one line each, every one found at once)."""

    def __init__(self, problems, where="configuration"):
        self.problems = list(problems)
        super().__init__(where, _abi.ECONFIG, "invalid configuration", "\n".join(self.problems))
        if len(self.problems) == 1:
            self.args = (self.problems[0],)
        else:
            self.args = (f"{len(self.problems)} configuration problems:\n  " + "\n  ".join(self.problems),)


class PluginLoadError(GripError):
    """The file exists but is not a grip plugin this package can use (not loadable, no grip_plugin_get, another ABI
    major, a malformed table)."""

    def __init__(self, path, why):
        self.path = str(path)
        super().__init__(f"{path}: {why}")


class PluginNotFoundError(PluginLoadError, FileNotFoundError):
    """No plugin where one was asked for or looked for. ``looked`` lists the places, in order."""

    def __init__(self, why, looked=()):
        self.looked = list(looked)
        GripError.__init__(self, why)
        self.path = self.looked[0] if self.looked else ""
