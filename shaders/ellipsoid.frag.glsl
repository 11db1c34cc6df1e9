#version 330 core
// The nearer intersection of the view ray with the ellipsoid {x : |S⁻¹ Rᵀ (x − c)| = 1}: in
// the unit-sphere frame the ray o + t·k meets the sphere where
// |k|²t² + 2(o·k)t + |o|² − 1 = 0.
#include "lighting.glsl"
#include "walls.glsl"
in vec3 v_position;
flat in mat3 v_rotation;
flat in vec3 v_scale;
flat in vec3 v_centre;
flat in vec4 v_color;
out vec4 f_color;

void main() {
    vec3 ray = v_position - u_eye;
    mat3 to_local = transpose(v_rotation);
    vec3 o = (to_local * (u_eye - v_centre)) / v_scale;
    vec3 k = (to_local * ray) / v_scale;
    float a = dot(k, k), b = dot(o, k), c = dot(o, o) - 1.0;
    float disc = b * b - a * c;
    if (disc < 0.0) discard;
    float t = (-b - sqrt(disc)) / a;
    vec3 p = u_eye + t * ray;
    // the gradient of |S⁻¹ x'|² at x' = S·u is 2 S⁻¹ u: the normal, back in world
    vec3 n = normalize(v_rotation * ((o + t * k) / v_scale));
    f_color = through_walls(gizmo_shade(v_color, n, p), p);  // opaque dots only: u_container.w
}
