#version 330 core
// The floor at y = 0, drawn by two programs: the rectangles where shadows can fall (with shadow
// lookups), and behind them the whole large square (without, NO_SHADOWS).
#include "lighting.glsl"
#include "shadow.glsl"
uniform mat4 u_vp;
in vec2 in_xz;               // world x, z, m
out vec3 v_position;
out vec3 v_shadow;

void main() {
    v_position = vec3(in_xz.x, 0.0, in_xz.y);
    v_shadow = shadow_coords(v_position, vec3(0.0, 1.0, 0.0));
    gl_Position = u_vp * vec4(v_position, 1.0);
}
