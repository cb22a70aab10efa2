"""The composition root: `build_services` wires the runtime into services once; warm-up, metrics and the scheduler."""
