"""The closed-loop driver: plan, generate module by module, check, repair, resume."""

# Backends translate can drive today (a Rust backend brings its own crate layout).
TRANSLATE_TARGETS = ("jax", "numpy")
