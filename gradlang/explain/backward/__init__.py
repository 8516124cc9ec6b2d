"""`explain backward(e, x)`: the reverse-mode tape as tables, forward and backward, folded into
vector rows, with what reaches each cut.
"""
