"""The tensor reverse pass, shown: a gradient of any tensor formula, one adjoint rule per operation,
then the identities of the rewrite registry (derive/tensor/rewrite.py) that tidied it.
"""
