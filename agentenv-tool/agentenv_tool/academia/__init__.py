"""Academia: a generated citation graph and co-author graph (networkx)."""
