"""`python -m gradlang` is the same as the `gradlang` command."""

import sys

from .cli import main

sys.exit(main())
