"""ctest's entry for the Python package's tests: pytest on tests/python, or a SKIPPED line where numpy or
pytest is not installed (Debian: python3-numpy, python3-pytest). The package itself must import."""
import os
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as missing:
    print(f"SKIPPED: {missing.name} is not installed, so the Python package was not tested")
    sys.exit(0)

sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", os.path.dirname(os.path.abspath(__file__)), *sys.argv[1:]]))
