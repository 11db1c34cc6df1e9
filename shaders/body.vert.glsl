#version 330 core
// Bodies, instanced per Shape: the mesh is in the body (principal) frame; one instance per body.
#include "lighting.glsl"
#include "shadow.glsl"
uniform mat4 u_vp;          // world → clip
in vec3 in_position;        // body frame, m
in vec3 in_normal;          // body frame, unit
in mat4 i_model;            // body → world (rotation + COM translation, no scale)
in vec3 i_color;            // linear RGB
in float i_highlight;       // 1 = selected
out vec3 v_position;
out vec3 v_normal;
out vec3 v_shadow;          // shadow-map coordinates
flat out vec3 v_color;
flat out float v_highlight;

void main() {
    vec4 world = i_model * vec4(in_position, 1.0);
    v_position = world.xyz;
    v_normal = mat3(i_model) * in_normal;   // rigid: the rotation is its own normal matrix
    v_shadow = shadow_coords(world.xyz, v_normal);
    v_color = i_color;
    v_highlight = i_highlight;
    gl_Position = u_vp * world;
}
