"""How bodies move: free motion, the contact solver, warm starts, islands, sleep, energy."""
