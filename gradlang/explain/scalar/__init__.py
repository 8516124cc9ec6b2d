"""The scalar engine: one derivative of a scalar, rule by rule (the rule table), component by component,
with why a component is zero, a summary, and unfolding of builtins into their definitions.
"""
