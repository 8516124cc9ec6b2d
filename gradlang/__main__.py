"""`python -m gradlang` is the same as the `gradlang` command."""

import sys

from gradlang.shell.command import command

sys.exit(command())
