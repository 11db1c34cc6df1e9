"""Which bodies touch and where: broad phase, narrow phase, walls, contact manifolds."""
