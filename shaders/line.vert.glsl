#version 330 core
// Gizmo lines (the polhode trail): world positions with a colour each; line.geom.glsl widens
// each segment into a screen-space quad.
uniform mat4 u_vp;
in vec3 in_position;   // world, m
in vec4 in_color;      // linear RGB, alpha
out vec4 g_color;

void main() {
    g_color = in_color;
    gl_Position = u_vp * vec4(in_position, 1.0);
}
