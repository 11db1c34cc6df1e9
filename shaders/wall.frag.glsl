#version 330 core
// Translucent glass walls: a faint tint that thickens at grazing angles (the box's edges are
// drawn as tubes with the gizmos, so they stay crisp at any zoom).
uniform vec3 u_eye;
uniform vec3 u_wall_color;   // display RGB
in vec3 v_position;
in vec3 v_normal;
out vec4 f_color;

void main() {
    float facing = abs(dot(v_normal, normalize(u_eye - v_position)));
    float grazing = 1.0 - facing;
    f_color = vec4(u_wall_color, 0.06 + 0.14 * grazing * grazing * grazing);
}
