#version 330 core
#include "lighting.glsl"
#include "walls.glsl"
uniform float u_head_ratio;   // head length / head radius
in vec2 v_arrow;
in vec3 v_position;           // the outline's point, world, m
flat in mat3 v_dots;          // rows: side, facing, axis; columns: · light, · half vector, · up
flat in vec3 v_shape;         // shaft radius, length, head radius, m
flat in vec4 v_color;         // opaque: arrows are drawn without blending
out vec4 f_color;

void main() {
    float head = u_head_ratio * v_shape.z;
    float neck = v_shape.y - head;  // where the head starts, m from the tail
    bool in_head = head > 0.0 && v_arrow.y >= neck;  // a tube has no head
    float radius = in_head ? v_shape.z * (v_shape.y - v_arrow.y) / head : v_shape.x;
    // the surface under this pixel, in (side, facing, axis) components: across the silhouette
    // a cylinder's (or cone's) normal turns from the side through the camera-facing direction;
    // a cone's also leans along the axis by its radius/length slope
    float u = clamp(v_arrow.x / max(radius, 1e-12), -1.0, 1.0);  // 0/0 at the very tip
    float lean = in_head ? v_shape.z / head : 0.0;
    vec3 n = vec3(u, sqrt(max(1.0 - u * u, 0.0)), lean) * inversesqrt(1.0 + lean * lean);
    f_color = through_walls(display(shade_dots(v_color.rgb, n * v_dots, 1.0, GIZMO_SHININESS,
                                               GIZMO_SPECULAR), v_color.a), v_position);
}
