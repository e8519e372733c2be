"""The integer resolutions of the exact models (see "Integer scaling" in
``formulations/admission.md``).

Their own module, below both ``instance.py`` (whose validator keeps the scaled sums
representable) and ``data.py`` (which scales with them), so that neither imports the other
back.
"""

#: Tier values are resolved to 1/VALUE_SCALE.
VALUE_SCALE = 1000
#: The largest L2 coefficient after scaling.
PROGRESS_SCALE = 10**6
