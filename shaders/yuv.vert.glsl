#version 330 core
// One triangle covering the target (no vertex buffer: positions from gl_VertexID).

void main() {
    vec2 ndc = vec2((gl_VertexID == 1) ? 3.0 : -1.0, (gl_VertexID == 2) ? 3.0 : -1.0);
    gl_Position = vec4(ndc, 0.0, 1.0);
}
