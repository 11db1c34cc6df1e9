#version 330 core
// Shadow pass: bodies from the light (same instancing as body.vert.glsl).
uniform mat4 u_light_vp;
in vec3 in_position;
in mat4 i_model;

void main() {
    gl_Position = u_light_vp * (i_model * vec4(in_position, 1.0));
}
