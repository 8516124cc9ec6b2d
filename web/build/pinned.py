"""The version of a package that the page's wheels pin (web/build/build.sh).

The installed one when the build's Python has it (the versions gradlang is
tested with), else the default below, known to run in Pyodide 314.
"""

import sys
from importlib import metadata

DEFAULTS = {"sympy": "1.14.0", "mpmath": "1.3.0", "lark": "1.3.1"}

name = sys.argv[1]
try:
    print(metadata.version(name))
except metadata.PackageNotFoundError:
    print(DEFAULTS[name])
