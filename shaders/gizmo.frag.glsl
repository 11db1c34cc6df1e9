#version 330 core
#include "lighting.glsl"
#include "walls.glsl"
in vec3 v_position;
in vec3 v_normal;
in vec4 v_color;
out vec4 f_color;

void main() {
    vec3 n = normalize(v_normal);
    if (!gl_FrontFacing) n = -n;
    f_color = through_walls(gizmo_shade(v_color, n, v_position), v_position);
}
