"""The interpreter: builtins, evaluation, `at`, and the Session that runs statements."""
