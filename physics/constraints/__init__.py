"""Joints between bodies (ball, hinge, prismatic, fixed, distance): their definitions and their
velocity and position solves."""
