#version 330 core
// Container walls: a unit box (x, z in ±0.5, y in 0…1) scaled to the container size.
uniform mat4 u_vp;
uniform vec3 u_size;   // container extents, m
in vec3 in_position;
in vec3 in_normal;     // outward
out vec3 v_position;
out vec3 v_normal;

void main() {
    v_position = in_position * u_size;
    v_normal = in_normal;
    gl_Position = u_vp * vec4(v_position, 1.0);
}
