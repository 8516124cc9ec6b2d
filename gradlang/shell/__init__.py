"""Thin shells over Session: the command line, the REPL, the notebook extension, help, the lexer."""
