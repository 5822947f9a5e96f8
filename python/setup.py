"""Records where the grip plugin is when the package is built, so that `import grip` finds it without
GRIP_PLUGIN: $GRIP_PLUGIN if it names a file, else the `plugin` variable of pkg-config's grip.pc (installed by
`cmake --install`). Nothing is recorded when neither is there; grip.find_plugin() then looks in the usual places.
The metadata is in pyproject.toml."""

import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py


def installed_plugin():
    env = os.environ.get("GRIP_PLUGIN")
    if env and os.path.isfile(env):
        return os.path.realpath(env)
    exe = shutil.which("pkg-config")
    if exe:
        try:
            out = subprocess.run([exe, "--variable=plugin", "grip"], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        path = out.stdout.strip()
        if out.returncode == 0 and path and os.path.isfile(path):
            return os.path.realpath(path)
    return None


class build_py_recording(build_py):
    def run(self):
        super().run()
        path = installed_plugin()
        target = os.path.join(self.build_lib, "grip", "_install.py")
        if not path:
            if os.path.exists(target):  # an earlier build's record, in a reused build folder
                os.remove(target)
            return
        with open(target, "w", encoding="utf-8") as f:
            f.write('"""Written when the package was built (setup.py): where the grip plugin was then."""\n')
            f.write(f"PLUGIN_PATH = {path!r}\n")
        self.announce(f"grip: recorded the plugin at {path}", level=2)


setup(cmdclass={"build_py": build_py_recording})
