"""Shapes: rotations, mesh files and their mass properties, hull topology."""
