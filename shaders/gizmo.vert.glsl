#version 330 core
// Gizmo solids (arrow shafts and heads, spheres, ellipsoids), instanced: unit mesh → scaled,
// rotated and moved per instance.
uniform mat4 u_vp;
in vec3 in_position;
in vec3 in_normal;
in mat3 i_rotation;   // columns: the instance's x, y, z axes in world
in vec3 i_scale;      // > 0 on each axis
in vec3 i_offset;     // world, m
in vec4 i_color;      // linear RGB, alpha
out vec3 v_position;
out vec3 v_normal;
out vec4 v_color;

void main() {
    v_position = i_rotation * (in_position * i_scale) + i_offset;
    v_normal = i_rotation * (in_normal / i_scale);   // inverse-transpose of rotation × scale
    v_color = i_color;
    gl_Position = u_vp * vec4(v_position, 1.0);
}
