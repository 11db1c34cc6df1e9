"""Drawing: the OpenGL renderer, gizmos, camera, picking, and the ImGui backend."""
