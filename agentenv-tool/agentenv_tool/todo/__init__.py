"""TODO: a project and task store, seeded per episode."""
