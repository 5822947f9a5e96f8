"""ctest's python_pytest: runs this folder's tests with pytest, or exits 77 (ctest's "skipped") when this Python
lacks numpy or pytest. Arguments go to pytest."""

import os
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print(f"skipped: {sys.executable} has no {e.name} (Debian: apt-get install python3-numpy python3-pytest)")
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
# no .pytest_cache or __pycache__ in the source tree
sys.dont_write_bytecode = True
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "-o", "console_output_style=classic", here] + sys.argv[1:]))
