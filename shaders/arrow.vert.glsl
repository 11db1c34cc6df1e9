#version 330 core
// Thin arrows and tubes (a few pixels wide) as impostors: a flat outline in the plane through
// the axis that faces the camera (the shaft a quad as wide as the shaft, the head a triangle as
// wide as the head), shaded by arrow.frag.glsl as a cylinder and a cone. Three triangles
// instead of the ten of a three-sided prism and pyramid: on llvmpipe each small triangle costs
// the setup and the partly covered pixel blocks it shades. The light, the half vector and up
// are taken apart here once per arrow along its side, facing and axis directions, so a pixel
// only combines three numbers per direction (the view direction of the arrow's middle serves
// the whole arrow: a few pixels wide, the highlight cannot show the difference).
#include "lighting.glsl"
uniform mat4 u_vp;
uniform float u_head_ratio;   // head length / head radius
in vec2 in_corner;          // (side −1, 0, 1; 0 tail, 1 neck of shaft, 2 neck of head, 3 tip)
in mat3 i_rotation;         // column 1: the arrow's direction (unit), world
in vec3 i_scale;            // shaft radius, length, head radius (0: a tube), m
in vec3 i_offset;           // tail, world, m
in vec4 i_color;            // linear RGB, alpha
out vec2 v_arrow;           // (across, along) from the tail, m
out vec3 v_position;        // the outline's point, world, m (the walls' tint)
flat out mat3 v_dots;       // rows: side, facing, axis; columns: · light, · half vector, · up
flat out vec3 v_shape;      // i_scale
flat out vec4 v_color;

void main() {
    vec3 axis = i_rotation[1];
    vec3 middle = i_offset + axis * (0.5 * i_scale.y);
    vec3 side = cross(axis, u_eye - middle);
    // seen end-on the arrow has no side facing the camera; any perpendicular will do
    side = dot(side, side) > 1e-24 ? normalize(side) : i_rotation[0];
    float head = u_head_ratio * i_scale.z;
    float along = in_corner.y < 0.5 ? 0.0 : (in_corner.y < 2.5 ? i_scale.y - head : i_scale.y);
    v_arrow = vec2(in_corner.x * (in_corner.y < 1.5 ? i_scale.x : i_scale.z), along);
    vec3 facing = cross(side, axis);  // unit, perpendicular to the axis, towards the eye
    // the outline stands in front of the axis by the shaft's radius, where the tube's surface
    // faces the camera: an edge tube of a box wireframe shows over both faces at the edge
    vec3 position = i_offset + axis * v_arrow.y + side * v_arrow.x + facing * i_scale.x;
    v_dots = transpose(mat3(side, facing, axis))
           * mat3(u_light_dir, half_vector(middle), vec3(0.0, 1.0, 0.0));
    v_position = position;
    v_shape = i_scale;
    v_color = i_color;
    gl_Position = u_vp * vec4(position, 1.0);
}
