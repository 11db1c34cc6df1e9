#version 330 core
#include "lighting.glsl"
in vec3 v_position;
in vec3 v_normal;
in vec4 v_color;
out vec4 f_color;

void main() {
    vec3 n = normalize(v_normal);
    if (!gl_FrontFacing) n = -n;
    vec3 c = shade(v_color.rgb, n, v_position, 1.0, 32.0, 0.35);
    // translucent gizmos (the inertia ellipsoid) get denser towards their outline
    float facing = abs(dot(n, normalize(u_eye - v_position)));
    float alpha = v_color.a < 1.0 ? mix(v_color.a, 1.0, 0.6 * pow(1.0 - facing, 3.0)) : 1.0;
    f_color = display(c, alpha);
}
