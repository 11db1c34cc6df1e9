#version 330 core
#include "lighting.glsl"
#include "shadow.glsl"
#include "walls.glsl"
uniform vec3 u_highlight_color;  // selection rim/tint, linear RGB
in vec3 v_position;
in vec3 v_normal;
in vec3 v_shadow;
flat in vec3 v_color;
flat in float v_highlight;
out vec4 f_color;

void main() {
    vec3 n = normalize(v_normal);
    if (!gl_FrontFacing) n = -n;   // open (shell) meshes are drawn two-sided
    vec3 c = shade(v_color, n, v_position, shadow_lit(v_shadow), 48.0, 0.3);
    // selection: a glowing rim along the silhouette (Fresnel-like) and a slight lift, so the
    // body keeps its own colour
    float facing = clamp(dot(n, normalize(u_eye - v_position)), 0.0, 1.0);
    float rim = 1.0 - facing;
    vec3 selected = c * 1.15 + u_highlight_color * (1.4 * rim * rim * rim + 0.04);
    f_color = through_walls(display(v_highlight > 0.5 ? selected : c, 1.0), v_position);
}
