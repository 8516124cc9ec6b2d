"""Source text to lark trees: the grammar's parser and its limits."""
